// iota and eye: one generated kernel each, the shape in the source.

#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>

namespace sluice::cuda {
namespace {

class CreationStep final : public CudaUnit {
 public:
  CreationStep(const Node& node, CudaDevice& device)
      : what_(op_name(node.op)),
        kernel_(load_kernels(creation_kernel(node), device.arch()).front()),
        geometry_(loop_launch(node.spec.size(), device.multiprocessors())),
        empty_(node.spec.size() == 0) {}

  void enqueue(StepContext& ctx, std::span<void* const>, std::span<void* const> out) const override {
    if (empty_) return;
    launch(kernel_, geometry_, {word(out[0])}, ctx.stream, ctx.device.who(), what_);
  }

 private:
  std::string what_;
  cudaKernel_t kernel_;
  Launch geometry_;
  bool empty_;
};

}  // namespace

std::unique_ptr<CudaUnit> make_creation_step(const Node& node, CudaDevice& device) {
  return std::make_unique<CreationStep>(node, device);
}

}  // namespace sluice::cuda
