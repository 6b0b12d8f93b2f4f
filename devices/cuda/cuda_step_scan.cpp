// Cumulative sums, products, maxima and minima along an axis: the input as
// [outer][n][inner], one running value per line (an (outer, inner) pair),
// a thread per line or a block per line as a reduction's results are shared
// (reduce_launch: a block when the lines are long and either contiguous or
// too few to keep the GPU busy). The kernel is a template of
// kernels/algorithms.cuh.

#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>

namespace sluice::cuda {
namespace {

class ScanStep final : public CudaUnit {
 public:
  ScanStep(const Node& node, CudaDevice& device) : what_(op_name(node.op)) {
    namespace w = scan_words;
    const Shape& x = node.operands[0]->spec.shape;
    const int axis = static_cast<int>(node.attrs.axis);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis; ++k) outer *= x.dim(k);
    for (int k = axis + 1; k < x.rank(); ++k) inner *= x.dim(k);
    const int64_t n = x.rank() == 0 ? 1 : x.dim(axis);
    count_ = outer * n * inner;
    words_.assign(w::kWords, 0);
    words_[w::kOuter] = word(outer);
    words_[w::kN] = word(n);
    words_[w::kInner] = word(inner);
    words_[w::kReverse] = word(int64_t{node.attrs.reverse});
    const ReduceLaunch how = reduce_launch(outer * inner, n, inner == 1, device.multiprocessors());
    words_[w::kBlockPerLine] = word(int64_t{how.block_per_output});
    geometry_ = how.launch;
    kernel_ = load_kernels(scan_kernel(node), device.arch()).front();
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    if (count_ == 0) return;
    std::vector<Word> words = words_;
    words[scan_words::kSource] = word(in[0]);
    words[scan_words::kResult] = word(out[0]);
    launch(kernel_, geometry_, words, ctx.stream, ctx.device.who(), what_);
  }

 private:
  std::string what_;
  std::vector<Word> words_;
  int64_t count_ = 0;
  Launch geometry_;
  cudaKernel_t kernel_ = nullptr;
};

}  // namespace

std::unique_ptr<CudaUnit> make_scan_step(const Node& node, CudaDevice& device) {
  return std::make_unique<ScanStep>(node, device);
}

}  // namespace sluice::cuda
