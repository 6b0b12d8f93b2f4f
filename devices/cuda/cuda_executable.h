#pragma once
// A Function compiled for one GPU (cuda_program.h). run()
// queues everything on the device's compute queue and returns at once:
// arguments still being computed on this device are waited for there (the
// stream waits on their events), never on the host; the outputs' event is
// set by the queue's completion thread.
// Thread safety: run may be called from many threads at once.

#include <memory>
#include <vector>

#include <sluice/devices/cuda/cuda_device.h>
#include <sluice/devices/cuda/cuda_program.h>

namespace sluice::cuda {

class CudaExecutable final : public ExecutableImpl {
 public:
  CudaExecutable(Function f, CudaDevice& device);

  const Function& function() const override { return function_; }
  Device device() const override { return device_.device(); }
  std::vector<BufferPtr> run(std::span<const BufferPtr> args, std::span<const bool> donated,
                             OutputMemory output_memory) override;

 private:
  Function function_;
  CudaDevice& device_;
  CudaProgram program_;
};

}  // namespace sluice::cuda
