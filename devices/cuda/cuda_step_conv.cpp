// Conv with every option the host takes (any number of spatial axes,
// strides, padding, input and kernel dilation, feature and batch groups), in
// every floating dtype: a thread per output element summing its window
// directly (kernels/algorithms.cuh), f16 and bf16 accumulating in f32.

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>
#include <sluice/devices/detail/conv_geometry.h>

namespace sluice::cuda {
namespace {

class ConvStep final : public CudaUnit {
 public:
  ConvStep(const Node& node, CudaDevice& device) : bytes_(node.spec.bytes()) {
    namespace w = conv_words;
    const ConvGeometry g = conv_geometry(node);
    outputs_ = node.spec.size();
    empty_window_ = g.group_in == 0;
    words_.assign(w::kWords, 0);
    words_[w::kSpatial] = word(int64_t{g.spatial()});
    words_[w::kOutBatch] = word(g.out_batch);
    words_[w::kChannels] = word(g.channels);
    words_[w::kGroupIn] = word(g.group_in);
    words_[w::kOutChannels] = word(g.out_channels);
    words_[w::kGroupOut] = word(g.group_out);
    words_[w::kBatchGroups] = word(g.batch_groups);
    words_[w::kInputSize] = word(g.input_size);
    words_[w::kKernelSize] = word(g.kernel_size);
    words_[w::kOutputSize] = word(g.output_size);
    for (int d = 0; d < g.spatial(); ++d) {
      const auto s = static_cast<size_t>(d);
      words_[w::kInDims + d] = word(g.input[s]);
      words_[w::kKernelDims + d] = word(g.kernel[s]);
      words_[w::kOutDims + d] = word(g.output[s]);
      words_[w::kStrides + d] = word(g.strides[s]);
      words_[w::kLow + d] = word(g.low[s]);
      words_[w::kInputDilation + d] = word(g.input_dilation[s]);
      words_[w::kKernelDilation + d] = word(g.kernel_dilation[s]);
    }
    kernel_ = load_kernels(conv_kernel(node.spec.dtype), device.arch()).front();
    geometry_ = loop_launch(outputs_, device.multiprocessors());
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    if (outputs_ == 0) return;
    if (empty_window_) {  // nothing to sum over
      check(cudaMemsetAsync(out[0], 0, static_cast<size_t>(bytes_), ctx.stream), ctx.device.who(), "conv: zeros");
      return;
    }
    std::vector<Word> words = words_;
    words[conv_words::kInput] = word(in[0]);
    words[conv_words::kKernel] = word(in[1]);
    words[conv_words::kResult] = word(out[0]);
    launch(kernel_, geometry_, words, ctx.stream, ctx.device.who(), "conv");
  }

 private:
  int64_t bytes_, outputs_ = 0;
  bool empty_window_ = false;
  std::vector<Word> words_;
  cudaKernel_t kernel_ = nullptr;
  Launch geometry_;
};

}  // namespace

std::unique_ptr<CudaUnit> make_conv_step(const Node& node, CudaDevice& device) {
  return std::make_unique<ConvStep>(node, device);
}

}  // namespace sluice::cuda
