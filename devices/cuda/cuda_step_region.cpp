// A fused elementwise region: one generated kernel, one pass over memory.

#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>

namespace sluice::cuda {
namespace {

class RegionStep final : public CudaUnit {
 public:
  RegionStep(const LoweredUnit& step, CudaDevice& device)
      : what_(step.what),
        geometry_(loop_launch(step.nodes.front()->spec.size(), device.multiprocessors())),
        empty_(step.nodes.front()->spec.size() == 0) {
    KernelSource source = region_kernel(step);
    kernel_ = load_kernels(source, device.arch()).front();
    words_ = std::move(source.words);
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    if (empty_) return;
    std::vector<Word> words;
    words.reserve(in.size() + out.size() + words_.size());
    for (void* p : in) words.push_back(word(p));
    for (void* p : out) words.push_back(word(p));
    words.insert(words.end(), words_.begin(), words_.end());
    launch(kernel_, geometry_, words, ctx.stream, ctx.device.who(), what_);
  }

 private:
  std::string what_;
  cudaKernel_t kernel_ = nullptr;
  std::vector<Word> words_;  // after the pointers
  Launch geometry_;
  bool empty_;
};

}  // namespace

std::unique_ptr<CudaUnit> make_region_step(const LoweredUnit& step, CudaDevice& device) {
  return std::make_unique<RegionStep>(step, device);
}

}  // namespace sluice::cuda
