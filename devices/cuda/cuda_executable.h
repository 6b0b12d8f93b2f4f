#pragma once
// A Function compiled for one GPU: its lowered steps (lowering.h), each made
// into what it queues (cuda_steps.h), its constants uploaded once. run()
// queues everything on the device's compute queue and returns at once:
// arguments still being computed on this device are waited for there (the
// stream waits on their events), never on the host; the outputs' event is
// set by the queue's completion thread.
// Thread safety: run may be called from many threads at once.

#include <memory>
#include <vector>

#include <sluice/devices/cuda/cuda_device.h>
#include <sluice/devices/cuda/cuda_steps.h>

namespace sluice::cuda {

class CudaExecutable final : public ExecutableImpl {
 public:
  CudaExecutable(Function f, CudaDevice& device);

  const Function& function() const override { return function_; }
  Device device() const override { return device_.device(); }
  std::vector<BufferPtr> run(const std::vector<BufferPtr>& args, const std::vector<bool>& donated,
                             OutputMemory output_memory) override;

 private:
  Function function_;
  CudaDevice& device_;
  LoweredFunction lowered_;
  std::vector<std::unique_ptr<CudaUnit>> steps_;
  std::vector<std::shared_ptr<void>> constants_;  // device memory, per lowered.constants
};

}  // namespace sluice::cuda
