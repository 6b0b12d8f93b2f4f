#include <sluice/devices/cuda/cuda_executable.h>

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/detail/run_outputs.h>
#include <sluice/base/error.h>

namespace sluice::cuda {

CudaExecutable::CudaExecutable(Function f, CudaDevice& device)
    : function_(std::move(f)), device_(device), program_(function_, device) {}

std::vector<BufferPtr> CudaExecutable::run(std::span<const BufferPtr> args, std::span<const bool> donated,
                                           OutputMemory /*output_memory: device memory only*/) {
  device_.activate();
  const LoweredFunction& lowered = program_.lowered();
  RunOutputs run = make_run_outputs(lowered, device_.device(), args, donated, program_.constants(),
                                    [this](size_t bytes) { return device_.allocate(bytes); });
  // What the queued work reads and writes, alive until it is done.
  std::vector<std::shared_ptr<void>> keep;
  for (const BufferPtr& a : args)
    if (a->memory) keep.push_back(a->memory);
  for (const BufferPtr& o : run.buffers) keep.push_back(o->memory);
  std::shared_ptr<void> scratch;
  if (lowered.scratch_bytes > 0) {
    scratch = device_.allocate(static_cast<size_t>(lowered.scratch_bytes));
    keep.push_back(scratch);
  }
  auto address = [&](const ValueLocation& where) -> void* {
    auto i = static_cast<size_t>(where.index);
    switch (where.kind) {
      case ValueLocation::Kind::Argument: return args[i]->data;
      case ValueLocation::Kind::Constant: return program_.constants()[i].get();
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
      program_.enqueue(ctx, address);
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
  set_run_event(lowered, donated, run.buffers, done);
  return std::move(run.buffers);
}

}  // namespace sluice::cuda
