#include "devices/cpu/cpu_executable.h"

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <span>
#include <utility>

#include "devices/cpu/host_memory.h"
#include "devices/cpu/thread_pool.h"
#include "ops/error.h"

namespace sluice::cpu {
namespace {

// A run that becomes runnable when another finishes runs on that thread, at
// once; past this depth of such runs nested on one stack it is enqueued, so a
// long chain of dependent runs cannot overflow the stack.
constexpr int kMaxInlineDepth = 8;
thread_local int t_inline_depth = 0;

// Where one run reads and writes.
struct Frame {
  std::vector<const void*> args;                   // each argument's data
  std::vector<void*> slots;                        // each slot's data
  std::vector<std::pair<int64_t, void*>> copies;   // (argument, destination): donated arguments outputs show
};

// The pointers an instruction passes its kernel, without touching the heap
// for the usual handful.
template <typename P>
class Pointers {
 public:
  explicit Pointers(size_t n) : n_(n) {
    if (n > small_.size()) large_.resize(n);
  }
  P& operator[](size_t i) { return data()[i]; }
  std::span<const P> span() { return {data(), n_}; }

 private:
  P* data() { return large_.empty() ? small_.data() : large_.data(); }
  std::array<P, 8> small_{};
  std::vector<P> large_;
  size_t n_;
};

// Rethrows the exception being handled, its message prefixed with the step
// that raised it; sluice errors keep their type.
[[noreturn]] void rethrow_naming(const std::string& step) {
  const std::string prefix = "host: " + step + " failed: ";
  try {
    throw;
  } catch (const ShapeError& e) {
    throw ShapeError(prefix + e.what());
  } catch (const TypeError& e) {
    throw TypeError(prefix + e.what());
  } catch (const DeviceError& e) {
    throw DeviceError(prefix + e.what());
  } catch (const Error& e) {
    throw Error(prefix + e.what());
  } catch (const std::bad_alloc&) {
    throw DeviceError(prefix + "out of host memory");
  } catch (const std::exception& e) {
    throw DeviceError(prefix + e.what());
  } catch (...) {
    throw DeviceError(prefix + "unknown exception");
  }
}

BufferPtr make_buffer(Device device, void* data, size_t bytes, std::shared_ptr<void> memory, EventPtr ready) {
  auto b = std::make_shared<Buffer>();
  b->device = device;
  b->data = data;
  b->bytes = bytes;
  b->memory = std::move(memory);
  b->ready = std::move(ready);
  return b;
}

EventPtr failed_event(std::exception_ptr error) {
  auto e = std::make_shared<Event>();
  e->set_error(std::move(error));
  return e;
}

// Whether no one but this buffer holds its memory: no other tensor, view or
// run in flight reads it, so a run it is donated to may write over it.
bool is_exclusive(const Buffer& b) { return b.memory && b.memory.use_count() == 1; }

std::exception_ptr first_error(const std::vector<EventPtr>& events) {
  for (const EventPtr& e : events)
    if (std::exception_ptr error = e->error()) return error;
  return nullptr;
}

}  // namespace

class CompiledPlan {
 public:
  explicit CompiledPlan(Plan plan) : plan_(std::move(plan)) {}
  const Plan& plan() const { return plan_; }
  bool is_small() const { return plan_.work < kSmallWorkElements; }

  void execute(const Frame& frame) {
    Arena arena(*this);
    auto* base = static_cast<uint8_t*>(arena.memory.get());
    auto address = [&](const Location& l) -> void* {
      auto i = static_cast<size_t>(l.index);
      switch (l.kind) {
        case Location::Kind::Argument: return const_cast<void*>(frame.args[i]);
        case Location::Kind::Constant: return plan_.constants[i].get();
        case Location::Kind::Arena: return base + l.index;
        case Location::Kind::Slot: return frame.slots[i];
      }
      return nullptr;
    };
    for (const Instruction& ins : plan_.instructions) {
      Pointers<const void*> in(ins.inputs.size());
      Pointers<void*> out(ins.outputs.size());
      for (size_t i = 0; i < ins.inputs.size(); ++i) in[i] = address(ins.inputs[i]);
      for (size_t i = 0; i < ins.outputs.size(); ++i) out[i] = address(ins.outputs[i]);
      try {
        if (ins.region)
          ins.region->run(in.span(), out.span());
        else
          run_node(*ins.node, in.span(), out[0]);
      } catch (...) {
        rethrow_naming(ins.what);
      }
    }
    for (auto [arg, dst] : frame.copies)
      std::memcpy(dst, frame.args[static_cast<size_t>(arg)],
                  static_cast<size_t>(plan_.function.inputs()[static_cast<size_t>(arg)].bytes()));
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
  std::mutex mutex_;  // guards arenas_
  std::vector<std::shared_ptr<void>> arenas_;
};

namespace {

// A run waiting for its arguments, or enqueued.
struct PendingRun {
  std::shared_ptr<CompiledPlan> plan;
  Frame frame;
  EventPtr done;
  std::vector<EventPtr> waits;  // the arguments' events: a failed one fails the run
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
    std::exception_ptr error = first_error(waits);
    if (!error) {
      try {
        plan->execute(frame);
      } catch (...) {
        error = std::current_exception();
      }
    }
    EventPtr event = std::move(done);
    waits.clear();
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

std::vector<BufferPtr> CpuExecutable::run(const std::vector<BufferPtr>& args, const std::vector<bool>& donated) {
  const Plan& plan = plan_->plan();
  Frame frame;
  frame.args.reserve(args.size());
  std::vector<EventPtr> waits, pending_events;
  for (const BufferPtr& a : args) {
    frame.args.push_back(a->data);
    if (!a->ready) continue;
    waits.push_back(a->ready);
    if (!a->ready->is_set()) pending_events.push_back(a->ready);
  }

  // Slots: a donated argument's buffer where the plan allows it, else fresh memory.
  std::vector<bool> reused(args.size(), false);
  std::vector<std::shared_ptr<void>> slot_memory(plan.slots.size());
  frame.slots.resize(plan.slots.size());
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    for (int64_t d : plan.slots[s].donors) {
      auto k = static_cast<size_t>(d);
      if (!donated[k] || reused[k] || !is_exclusive(*args[k])) continue;
      reused[k] = true;
      slot_memory[s] = args[k]->memory;
      frame.slots[s] = args[k]->data;
      break;
    }
    if (!slot_memory[s]) {
      slot_memory[s] = host_allocate(static_cast<size_t>(plan.slots[s].bytes));
      frame.slots[s] = slot_memory[s].get();
    }
  }
  // Outputs showing a donated argument get a copy: its buffer is no longer the caller's.
  std::vector<std::shared_ptr<void>> copy_memory;
  for (const Location& out : plan.outputs) {
    auto k = static_cast<size_t>(out.index);
    if (out.kind != Location::Kind::Argument || !donated[k]) continue;
    copy_memory.resize(args.size());
    if (copy_memory[k]) continue;
    copy_memory[k] = host_allocate(args[k]->bytes);
    frame.copies.emplace_back(out.index, copy_memory[k].get());
  }

  EventPtr done;
  const bool inline_run = pending_events.empty() && (plan_->is_small() || in_tbb_task());
  if (inline_run) {
    std::exception_ptr error = first_error(waits);
    if (!error) {
      try {
        plan_->execute(frame);
      } catch (...) {
        error = std::current_exception();
      }
    }
    if (error) done = failed_event(std::move(error));
  } else {
    done = std::make_shared<Event>();
  }

  std::vector<BufferPtr> outputs;
  outputs.reserve(plan.outputs.size());
  for (size_t j = 0; j < plan.outputs.size(); ++j) {
    const Location& out = plan.outputs[j];
    auto i = static_cast<size_t>(out.index);
    size_t bytes = output_bytes_[j];
    switch (out.kind) {
      case Location::Kind::Slot:
        outputs.push_back(make_buffer(device_, frame.slots[i], bytes, slot_memory[i], done));
        break;
      case Location::Kind::Constant:
        outputs.push_back(make_buffer(device_, plan.constants[i].get(), bytes, plan.constants[i], nullptr));
        break;
      case Location::Kind::Argument:
        if (donated[i])
          outputs.push_back(make_buffer(device_, copy_memory[i].get(), bytes, copy_memory[i], done));
        else
          outputs.push_back(make_buffer(device_, args[i]->data, bytes, args[i]->memory, args[i]->ready));
        break;
      case Location::Kind::Arena:
        throw Error("host: output " + std::to_string(j) + " was planned in a run's scratch memory");
    }
  }
  if (inline_run) return outputs;

  auto pending = std::make_shared<PendingRun>();
  pending->plan = plan_;
  pending->frame = std::move(frame);
  pending->done = std::move(done);
  pending->waits = std::move(waits);
  for (size_t k = 0; k < args.size(); ++k)
    if (!reused[k]) pending->reads.push_back(args[k]->memory);
  pending->outputs = outputs;
  // One count per argument still being computed, plus one held until every
  // continuation is in place, so the run cannot start while they are added.
  pending->waiting.store(static_cast<int>(pending_events.size()) + 1, std::memory_order_relaxed);
  for (const EventPtr& e : pending_events) e->then([pending] { PendingRun::arrive(pending); });
  PendingRun::arrive(pending);
  return outputs;
}

}  // namespace sluice::cpu
