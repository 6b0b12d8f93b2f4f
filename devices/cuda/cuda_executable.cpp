#include <sluice/devices/cuda/cuda_executable.h>

#include <fmt/format.h>

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/detail/run_outputs.h>
#include <sluice/base/error.h>
#include <sluice/ops/passes/passes.h>

namespace sluice::cuda {
namespace {

// Scratch values start at multiples of this: a segment one warp loads in
// one transaction, and every dtype's alignment.
constexpr int64_t kScratchAlignment = 256;

// Rethrows the exception being handled with the step that raised it named,
// keeping DeviceError's type (the only one a step throws).
[[noreturn]] void rethrow_naming(const std::string& who, const std::string& step) {
  try {
    throw;
  } catch (const Error& e) {
    throw DeviceError(error_message(who, fmt::format("{} failed: {}", step, e.what()), "", ""));
  } catch (const std::exception& e) {
    throw DeviceError(error_message(who, fmt::format("{} failed: {}", step, e.what()), "", ""));
  }
}

}  // namespace

CudaExecutable::CudaExecutable(Function f, CudaDevice& device)
    : function_(std::move(f)),
      device_(device),
      lowered_(lower(passes::eliminate_common_subexpressions(function_), {.alignment = kScratchAlignment})) {
  device_.activate();
  for (const LoweredUnit& step : lowered_.steps) {
    try {
      steps_.push_back(make_step(step, device_));
    } catch (...) { rethrow_naming(device_.who(), step.what); }
  }
  for (const Node* c : lowered_.constants) {
    const Literal& lit = *c->attrs.literal;
    std::shared_ptr<void> memory = device_.allocate(lit.bytes.size());
    if (!lit.bytes.empty())
      check(cudaMemcpy(memory.get(), lit.bytes.data(), lit.bytes.size(), cudaMemcpyHostToDevice), device_.who(),
            "uploading a constant");
    constants_.push_back(std::move(memory));
  }
}

std::vector<BufferPtr> CudaExecutable::run(const std::vector<BufferPtr>& args, const std::vector<bool>& donated,
                                           OutputMemory /*output_memory: device memory only*/) {
  device_.activate();
  RunOutputs run = make_run_outputs(lowered_, device_.device(), args, donated, constants_,
                                    [this](size_t bytes) { return device_.allocate(bytes); });
  // What the queued work reads and writes, alive until it is done.
  std::vector<std::shared_ptr<void>> keep;
  for (const BufferPtr& a : args)
    if (a->memory) keep.push_back(a->memory);
  for (const BufferPtr& o : run.buffers) keep.push_back(o->memory);
  std::shared_ptr<void> scratch;
  if (lowered_.scratch_bytes > 0) {
    scratch = device_.allocate(static_cast<size_t>(lowered_.scratch_bytes));
    keep.push_back(scratch);
  }
  auto address = [&](const ValueLocation& where) -> void* {
    auto i = static_cast<size_t>(where.index);
    switch (where.kind) {
      case ValueLocation::Kind::Argument: return args[i]->data;
      case ValueLocation::Kind::Constant: return constants_[i].get();
      case ValueLocation::Kind::Scratch: return static_cast<char*>(scratch.get()) + where.index;
      case ValueLocation::Kind::Slot: return run.slots[i];
    }
    return nullptr;
  };

  CudaQueue& queue = device_.compute();
  EventPtr done;
  std::exception_ptr error;
  {
    std::lock_guard lock(device_.enqueue());
    try {
      std::vector<const Buffer*> pending;
      for (const BufferPtr& a : args) pending.push_back(a.get());
      queue.wait_for(pending);
      StepContext ctx{device_, queue.stream(), keep};
      std::vector<void*> in, out;
      for (size_t s = 0; s < steps_.size(); ++s) {
        const LoweredUnit& step = lowered_.steps[s];
        in.clear();
        out.clear();
        for (const ValueLocation& l : step.inputs) in.push_back(address(l));
        for (const ValueLocation& l : step.outputs) out.push_back(address(l));
        try {
          steps_[s]->enqueue(ctx, in, out);
        } catch (...) { rethrow_naming(device_.who(), step.what); }
      }
      for (auto [arg, dst] : run.copies)
        check(cudaMemcpyAsync(dst, args[arg]->data, args[arg]->bytes, cudaMemcpyDeviceToDevice, queue.stream()),
              device_.who(), "copying a donated argument an output shows");
    } catch (...) { error = std::current_exception(); }
    // Recorded even after a failure: what was queued keeps its memory until done.
    done = queue.record(std::move(keep));
  }
  if (error) {
    done = std::make_shared<Event>();
    done->set_error(error);
  }
  set_run_event(lowered_, donated, run.buffers, done);
  return std::move(run.buffers);
}

}  // namespace sluice::cuda
