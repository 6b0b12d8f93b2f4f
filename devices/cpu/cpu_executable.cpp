#include <sluice/devices/cpu/cpu_executable.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>

#include <sluice/devices/detail/host_memory.h>
#include <sluice/devices/cpu/thread_pool.h>
#include <sluice/devices/detail/pointers.h>
#include <sluice/devices/detail/run_outputs.h>
#include <sluice/devices/shared_memory.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

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

}  // namespace

class CompiledPlan {
 public:
  explicit CompiledPlan(Plan plan) : plan_(std::move(plan)) {}

  const Plan& plan() const { return plan_; }
  bool is_small() const { return plan_.lowered.work < kSmallWorkElements; }

  void execute(const Frame& frame) {
    Arena arena(*this);
    run_plan(plan_, {frame.args.span(), frame.slots.span(), arena.memory.get()});
    for (auto [arg, dst] : frame.copies)
      std::memcpy(dst, frame.args[arg], static_cast<size_t>(plan_.lowered.function.inputs()[arg].bytes()));
  }

 private:
  // A run's scratch memory, taken from the pool and given back: fresh large
  // blocks cost page faults on every run.
  struct Arena {
    explicit Arena(CompiledPlan& p) : owner(p) {
      if (owner.plan_.lowered.scratch_bytes == 0) return;
      {
        std::lock_guard lock(owner.mutex_);
        if (!owner.arenas_.empty()) {
          memory = std::move(owner.arenas_.back());
          owner.arenas_.pop_back();
        }
      }
      if (!memory) memory = host_allocate(static_cast<size_t>(owner.plan_.lowered.scratch_bytes));
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
    : function_(std::move(f)), device_(device), plan_(std::make_shared<CompiledPlan>(std::move(plan))) {}

CpuExecutable::~CpuExecutable() = default;

std::vector<BufferPtr> CpuExecutable::run(std::span<const BufferPtr> args, std::span<const bool> donated,
                                          OutputMemory output_memory) {
  const LoweredFunction& lowered = plan_->plan().lowered;
  bool waiting = false;
  for (const BufferPtr& a : args) waiting = waiting || !a->is_ready();
  RunOutputs run = make_run_outputs(lowered, device_, args, donated, plan_->plan().constants,
                                    output_memory == OutputMemory::Shared ? shared_allocate : host_allocate);
  Frame frame{Pointers<const void*>(args.size()), std::move(run.slots), std::move(run.copies)};
  for (size_t k = 0; k < args.size(); ++k) frame.args[k] = args[k]->data;
  std::vector<BufferPtr>& outputs = run.buffers;
  auto set_done = [&](const EventPtr& done) { set_run_event(lowered, donated, outputs, done); };
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
    return std::move(run.buffers);
  }

  auto pending = std::make_shared<PendingRun>();
  pending->plan = plan_;
  pending->frame = std::move(frame);
  pending->done = std::make_shared<Event>();
  set_done(pending->done);
  pending->args.assign(args.begin(), args.end());
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
  return std::move(run.buffers);
}

}  // namespace sluice::cpu
