// Windows: window_sum/product/max/min, a block per tile of a long line of
// overlapping windows (their inputs shared in shared memory) or else a
// thread per output combining its window; window_scatter_max/min, a thread per window picking its element
// (into a scratch of one index per window), then a thread per element of x
// adding the source values of the windows that picked it, in window order.
// The kernels are templates of kernels/algorithms.cuh.

#include <fmt/format.h>

#include <algorithm>

#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>
#include <sluice/devices/cuda/launch_geometry.h>

namespace sluice::cuda {
namespace {

class WindowStep final : public CudaUnit {
 public:
  WindowStep(const Node& node, CudaDevice& device)
      : what_(op_name(node.op)), scatter_(node.op == Op::WindowScatterMax || node.op == Op::WindowScatterMin) {
    namespace w = window_words;
    const Shape& x = node.operands[0]->spec.shape;
    // The windows' count per axis: the output's dims, or source's for a scatter.
    const Shape& windows = scatter_ ? node.operands[1]->spec.shape : node.spec.shape;
    words_.assign(w::kWords, 0);
    words_[w::kRank] = word(int64_t{x.rank()});
    for (int k = 0; k < x.rank(); ++k) {
      const auto at = static_cast<size_t>(k);
      words_[w::kDims + k] = word(x.dim(k));
      words_[w::kWindows + k] = word(windows.dim(k));
      words_[w::kWindow + k] = word(node.attrs.dims[at]);
      words_[w::kStride + k] = word(node.attrs.strides[at]);
      words_[w::kLow + k] = word(node.attrs.padding[at].low);
    }
    windows_ = windows.size();
    elements_ = x.size();
    words_[w::kCount] = word(windows_);
    const int sms = device.multiprocessors();
    if (scatter_) {
      kernels_ = load_kernels(window_scatter_kernel(node), device.arch());
      pick_ = loop_launch(windows_, sms);
      geometry_ = loop_launch(elements_, sms);
    } else {
      kernels_ = load_kernels(window_kernel(node), device.arch());
      const int last = x.rank() - 1;
      const int64_t tile =
          last < 0 ? 0 : window_tile(windows.dim(last), node.attrs.dims.back(), node.attrs.strides.back());
      words_[w::kTile] = word(tile);
      if (tile > 0) {
        reduce_ = kernels_[1];
        const int64_t lines = windows_ / windows.dim(last), tiles = (windows.dim(last) + tile - 1) / tile;
        geometry_ = block_loop_launch(lines * tiles, sms);
      } else {
        reduce_ = kernels_[0];
        geometry_ = loop_launch(windows_, sms);
      }
    }
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    namespace w = window_words;
    std::vector<Word> words = words_;
    words[w::kSource] = word(in[0]);
    words[w::kResult] = word(out[0]);
    if (!scatter_) {
      if (windows_ > 0) launch(reduce_, geometry_, words, ctx.stream, ctx.device.who(), what_);
      return;
    }
    if (elements_ == 0) return;
    std::shared_ptr<void> picks = ctx.device.allocate(static_cast<size_t>(std::max<int64_t>(windows_, 1)) * sizeof(int64_t));
    ctx.keep.push_back(picks);
    words[w::kPicks] = word(picks.get());
    words[w::kSource2] = word(in[1]);
    words[w::kInit] = word(in[2]);
    if (windows_ > 0) launch(kernels_[0], pick_, words, ctx.stream, ctx.device.who(), what_ + ": picks");
    launch(kernels_[1], geometry_, words, ctx.stream, ctx.device.who(), what_);
  }

 private:
  std::string what_;
  bool scatter_;
  std::vector<Word> words_;
  int64_t windows_ = 0, elements_ = 0;
  std::vector<cudaKernel_t> kernels_;
  cudaKernel_t reduce_ = nullptr;  // window_tiles or window (the reductions)
  Launch pick_, geometry_;
};

}  // namespace

std::unique_ptr<CudaUnit> make_window_step(const Node& node, CudaDevice& device) {
  return std::make_unique<WindowStep>(node, device);
}

}  // namespace sluice::cuda
