#include <sluice/devices/cpu/cpu_executable.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>

#include <sluice/devices/cpu/host_memory.h>
#include <sluice/devices/cpu/pointers.h>
#include <sluice/devices/cpu/thread_pool.h>
#include <sluice/ops/error.h>
#include <sluice/ops/error_format.h>

namespace sluice::cpu {
namespace {

// A run that becomes runnable when another finishes runs on that thread, at
// once; past this depth of such runs nested on one stack it is enqueued, so a
// long chain of dependent runs cannot overflow the stack.
constexpr int kMaxInlineDepth = 8;
thread_local int t_inline_depth = 0;

// Where one run reads and writes.
struct Frame {
  Pointers<const void*> args;                    // each argument's data
  Pointers<void*> slots;                         // each slot's data
  std::vector<std::pair<size_t, void*>> copies;  // (argument, destination): donated arguments outputs show
};

BufferPtr make_buffer(Device device, void* data, size_t bytes, std::shared_ptr<void> memory, EventPtr ready) {
  auto b = std::make_shared<Buffer>();
  b->device = device;
  b->data = data;
  b->bytes = bytes;
  b->memory = std::move(memory);
  b->ready = std::move(ready);
  return b;
}

// Whether no one but this buffer holds its memory: no other tensor, view or
// run in flight reads it, so a run it is donated to may write over it.
bool is_exclusive(const Buffer& b) { return b.memory && b.memory.use_count() == 1; }

std::exception_ptr first_error(const std::vector<BufferPtr>& args) {
  for (const BufferPtr& a : args)
    if (a->ready)
      if (std::exception_ptr e = a->ready->error()) return e;
  return nullptr;
}

}  // namespace

class CompiledPlan {
 public:
  explicit CompiledPlan(Plan plan) : plan_(std::move(plan)) {
    arg_output_.assign(plan_.function.inputs().size(), kNone);
    for (size_t j = plan_.outputs.size(); j-- > 0;) {
      const Location& out = plan_.outputs[j];
      if (out.kind == Location::Kind::Argument) arg_output_[static_cast<size_t>(out.index)] = j;
    }
  }
  static constexpr size_t kNone = ~size_t{0};

  const Plan& plan() const { return plan_; }
  bool is_small() const { return plan_.work < kSmallWorkElements; }
  // The first output showing slot s; the first showing argument k, or kNone.
  size_t slot_output(size_t s) const { return plan_.slots[s].output; }
  size_t arg_output(size_t k) const { return arg_output_[k]; }

  void execute(const Frame& frame) {
    Arena arena(*this);
    run_plan(plan_, {frame.args.span(), frame.slots.span(), arena.memory.get()});
    for (auto [arg, dst] : frame.copies)
      std::memcpy(dst, frame.args[arg], static_cast<size_t>(plan_.function.inputs()[arg].bytes()));
  }

 private:
  // A run's scratch memory, taken from the pool and given back: fresh large
  // blocks cost page faults on every run.
  struct Arena {
    explicit Arena(CompiledPlan& p) : owner(p) {
      if (owner.plan_.arena_bytes == 0) return;
      {
        std::lock_guard lock(owner.mutex_);
        if (!owner.arenas_.empty()) {
          memory = std::move(owner.arenas_.back());
          owner.arenas_.pop_back();
        }
      }
      if (!memory) memory = host_allocate(static_cast<size_t>(owner.plan_.arena_bytes));
    }
    ~Arena() {
      if (!memory) return;
      std::lock_guard lock(owner.mutex_);
      owner.arenas_.push_back(std::move(memory));
    }
    CompiledPlan& owner;
    std::shared_ptr<void> memory;
  };

  Plan plan_;
  std::vector<size_t> arg_output_;
  std::mutex mutex_;  // guards arenas_
  std::vector<std::shared_ptr<void>> arenas_;
};

namespace {

// A run waiting for its arguments, or enqueued.
struct PendingRun {
  std::shared_ptr<CompiledPlan> plan;
  Frame frame;
  EventPtr done;
  std::vector<BufferPtr> args;  // their events say whether they failed; their memory is not held through them
  // Memory of the arguments it reads: kept alive, and, being held, never
  // taken for another run's output while this one may still read it. A
  // donated argument whose buffer holds an output is not here: the output
  // keeps it, and the runs that may write over it next wait for this one.
  std::vector<std::shared_ptr<void>> reads;
  std::vector<BufferPtr> outputs;  // keeps what it writes alive, without holding the memory twice
  std::atomic<int> waiting{0};

  static void arrive(const std::shared_ptr<PendingRun>& run) {
    if (run->waiting.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if ((run->plan->is_small() || in_tbb_task()) && t_inline_depth < kMaxInlineDepth) {
      ++t_inline_depth;
      run->finish();
      --t_inline_depth;
    } else {
      enqueue([run] { run->finish(); });
    }
  }

  void finish() {
    std::exception_ptr error = first_error(args);
    if (!error) {
      try {
        plan->execute(frame);
      } catch (...) { error = std::current_exception(); }
    }
    EventPtr event = std::move(done);
    args.clear();
    reads.clear();
    outputs.clear();
    if (error)
      event->set_error(error);
    else
      event->set_ready();
  }
};

}  // namespace

CpuExecutable::CpuExecutable(Function f, Device device, Plan plan)
    : function_(std::move(f)), device_(device), plan_(std::make_shared<CompiledPlan>(std::move(plan))) {
  for (const Spec& s : function_.output_specs()) output_bytes_.push_back(static_cast<size_t>(s.bytes()));
}

CpuExecutable::~CpuExecutable() = default;

std::vector<BufferPtr> CpuExecutable::run(const std::vector<BufferPtr>& args,
                                          const std::vector<bool>& donated) {
  const Plan& plan = plan_->plan();
  Frame frame{Pointers<const void*>(args.size()), Pointers<void*>(plan.slots.size()), {}};
  bool waiting = false;
  for (size_t k = 0; k < args.size(); ++k) {
    frame.args[k] = args[k]->data;
    waiting = waiting || !args[k]->is_ready();
  }

  // The buffers this run writes: one per slot, a donated argument's where the
  // plan allows it, and a copy of each donated argument an output shows. The
  // first output showing each holds it; the others share its memory.
  std::vector<BufferPtr> outputs(plan.outputs.size());
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const size_t j = plan_->slot_output(s);
    std::shared_ptr<void> memory;
    void* data = nullptr;
    for (int64_t d : plan.slots[s].donors) {
      auto k = static_cast<size_t>(d);
      if (!donated[k] || !is_exclusive(*args[k])) continue;
      // The donated buffer is dead: its memory now belongs to the output
      // alone, so the run this output is donated to next finds it exclusive
      // even while this one is in flight.
      memory = std::move(args[k]->memory);
      data = args[k]->data;
      break;
    }
    if (!memory) {
      memory = host_allocate(static_cast<size_t>(plan.slots[s].bytes));
      data = memory.get();
    }
    frame.slots[s] = data;
    outputs[j] = make_buffer(device_, data, output_bytes_[j], std::move(memory), nullptr);
  }
  for (size_t k = 0; k < args.size(); ++k) {
    const size_t j = plan_->arg_output(k);
    if (!donated[k] || j == CompiledPlan::kNone) continue;
    std::shared_ptr<void> memory = host_allocate(args[k]->bytes);
    void* data = memory.get();
    frame.copies.emplace_back(k, data);
    outputs[j] = make_buffer(device_, data, output_bytes_[j], std::move(memory), nullptr);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (outputs[j]) continue;
    const Location& out = plan.outputs[j];
    auto i = static_cast<size_t>(out.index);
    const BufferPtr* shared = nullptr;
    switch (out.kind) {
      case Location::Kind::Slot: shared = &outputs[plan_->slot_output(i)]; break;
      case Location::Kind::Argument: shared = donated[i] ? &outputs[plan_->arg_output(i)] : &args[i]; break;
      case Location::Kind::Constant:
        outputs[j] =
            make_buffer(device_, plan.constants[i].get(), output_bytes_[j], plan.constants[i], nullptr);
        continue;
      case Location::Kind::Arena:
        throw InternalError(error_message("host", fmt::format("output {}", j),
                                          "a buffer that outlives the run",
                                          "one planned in a run's scratch memory"));
    }
    const Buffer& b = **shared;
    outputs[j] = make_buffer(device_, b.data, output_bytes_[j], b.memory, b.ready);
  }

  // Outputs this run computes get its event; those showing a non-donated
  // argument keep the argument's (set above), constants are ready.
  auto set_done = [&](const EventPtr& done) {
    for (size_t j = 0; j < outputs.size(); ++j) {
      const Location& out = plan.outputs[j];
      if (out.kind == Location::Kind::Slot ||
          (out.kind == Location::Kind::Argument && donated[static_cast<size_t>(out.index)]))
        outputs[j]->ready = done;
    }
  };
  if (!waiting && (plan_->is_small() || in_tbb_task())) {
    std::exception_ptr error = first_error(args);
    if (!error) {
      try {
        plan_->execute(frame);
      } catch (...) { error = std::current_exception(); }
    }
    if (error) {
      auto failed = std::make_shared<Event>();
      failed->set_error(std::move(error));
      set_done(failed);
    }
    return outputs;
  }

  auto pending = std::make_shared<PendingRun>();
  pending->plan = plan_;
  pending->frame = std::move(frame);
  pending->done = std::make_shared<Event>();
  set_done(pending->done);
  pending->args = args;
  // A donated argument whose memory went to an output has none left to hold.
  for (const BufferPtr& a : args)
    if (a->memory) pending->reads.push_back(a->memory);
  pending->outputs = outputs;
  // One count per argument still being computed, plus one held until every
  // continuation is in place, so the run cannot start while they are added.
  std::vector<EventPtr> events;
  for (const BufferPtr& a : args)
    if (!a->is_ready()) events.push_back(a->ready);
  pending->waiting.store(static_cast<int>(events.size()) + 1, std::memory_order_relaxed);
  for (const EventPtr& e : events) e->then([pending] { PendingRun::arrive(pending); });
  PendingRun::arrive(pending);
  return outputs;
}

}  // namespace sluice::cpu
