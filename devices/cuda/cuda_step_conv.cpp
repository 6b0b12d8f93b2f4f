// Conv with every option the host takes (any number of spatial axes,
// strides, padding, input and kernel dilation, feature and batch groups), in
// every floating dtype, as the host's im2col path does it: per (output
// batch, group) item, the windows' input elements are copied into a column
// matrix [group_in * window][outputs] (kernels/algorithms.cuh, a block per
// input channel's rows), and the
// item's outputs are one matrix product with the group's kernel on cuBLAS
// (f16 and bf16 accumulating in f32), batched over the output batch. A
// 1x1 window at stride 1 reads the input as it is, without columns. The
// columns of a large batch are made a part of the batch at a time, so their
// scratch stays under kColumnBytes.

#include <algorithm>

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>
#include <sluice/devices/cuda/launch_geometry.h>
#include <sluice/devices/detail/conv_geometry.h>

namespace sluice::cuda {
namespace {

constexpr int64_t kColumnBytes = int64_t{512} << 20;

bool reads_input_as_is(const ConvGeometry& g) {
  if (g.batch_groups > 1) return false;
  for (int i = 0; i < g.spatial(); ++i) {
    const auto s = static_cast<size_t>(i);
    if (g.kernel[s] != 1 || g.strides[s] != 1 || g.low[s] != 0 || g.high[s] != 0 || g.input_dilation[s] != 1)
      return false;
  }
  return true;
}

class ConvStep final : public CudaUnit {
 public:
  ConvStep(const Node& node, CudaDevice& device)
      : g_(conv_geometry(node)), dtype_(node.spec.dtype), elem_(dtype_size(dtype_)), as_is_(reads_input_as_is(g_)) {
    namespace w = conv_words;
    words_.assign(w::kWords, 0);
    words_[w::kGroups] = word(g_.groups);
    words_[w::kOutBatch] = word(g_.out_batch);
    words_[w::kChannels] = word(g_.channels);
    words_[w::kGroupIn] = word(g_.group_in);
    words_[w::kBatchGroups] = word(g_.batch_groups);
    words_[w::kInputSize] = word(g_.input_size);
    words_[w::kKernelSize] = word(g_.kernel_size);
    words_[w::kOutputSize] = word(g_.output_size);
    for (int d = 0; d < g_.spatial(); ++d) {
      const auto s = static_cast<size_t>(d);
      words_[w::kInDims + d] = word(g_.input[s]);
      words_[w::kKernelDims + d] = word(g_.kernel[s]);
      words_[w::kOutDims + d] = word(g_.output[s]);
      words_[w::kStrides + d] = word(g_.strides[s]);
      words_[w::kLow + d] = word(g_.low[s]);
      words_[w::kInputDilation + d] = word(g_.input_dilation[s]);
      words_[w::kKernelDilation + d] = word(g_.kernel_dilation[s]);
    }
    depth_ = g_.group_in * g_.kernel_size;
    const int64_t item_bytes = g_.groups * depth_ * g_.output_size * elem_;
    chunk_ = std::clamp<int64_t>(item_bytes == 0 ? g_.out_batch : kColumnBytes / item_bytes, 1,
                                 std::max<int64_t>(g_.out_batch, 1));
    if (!as_is_)
      im2col_ =
          load_kernels(im2col_kernel(elem_, g_.spatial(), conv_offsets_are_wide(g_)), device.arch()).front();
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    const int64_t outputs = g_.out_batch * g_.out_channels * g_.output_size;
    if (outputs == 0) return;
    if (depth_ == 0) {  // nothing to sum over
      check(cudaMemsetAsync(out[0], 0, static_cast<size_t>(outputs * elem_), ctx.stream), ctx.device.who(), "conv: zeros");
      return;
    }
    char* columns = nullptr;
    if (!as_is_) {
      std::shared_ptr<void> memory = ctx.device.allocate(static_cast<size_t>(chunk_ * g_.groups * depth_ * g_.output_size * elem_));
      ctx.keep.push_back(memory);
      columns = static_cast<char*>(memory.get());
    }
    for (int64_t b0 = 0; b0 < g_.out_batch; b0 += chunk_) {
      const int64_t count = std::min(chunk_, g_.out_batch - b0);
      // Where item (b, group)'s column matrix starts, and how far apart two b's are.
      const char* cols = static_cast<const char*>(in[0]) + b0 * g_.channels * g_.input_size * elem_;
      int64_t b_stride = g_.channels * g_.input_size;
      if (!as_is_) {
        namespace w = conv_words;
        std::vector<Word> words = words_;
        words[w::kInput] = word(in[0]);
        words[w::kColumns] = word(columns);
        words[w::kItems] = word(count * g_.groups);
        words[w::kFirstBatch] = word(b0);
        launch(im2col_, block_loop_launch(count * g_.groups * g_.group_in, ctx.device.multiprocessors()),
               words, ctx.stream, ctx.device.who(), "conv: columns");
        cols = columns;
        b_stride = g_.groups * depth_ * g_.output_size;
      }
      // y [b][group's out channels][outputs] = kernel [group's out channels][depth] x cols [depth][outputs]
      for (int64_t group = 0; group < g_.groups; ++group)
        enqueue_gemm(ctx, dtype_,
                     {.batch = count, .m = g_.group_out, .n = g_.output_size, .k = depth_,
                      .a = static_cast<const char*>(in[1]) + group * g_.group_out * depth_ * elem_, .lda = depth_,
                      .stride_a = 0, .b = cols + group * depth_ * g_.output_size * elem_, .ldb = g_.output_size,
                      .stride_b = b_stride,
                      .c = static_cast<char*>(out[0]) + (b0 * g_.out_channels + group * g_.group_out) * g_.output_size * elem_,
                      .ldc = g_.output_size, .stride_c = g_.out_channels * g_.output_size},
                     "conv");
    }
  }

 private:
  ConvGeometry g_;
  DType dtype_;
  int elem_;
  bool as_is_;
  std::vector<Word> words_;
  int64_t depth_ = 0, chunk_ = 1;
  cudaKernel_t im2col_ = nullptr;
};

}  // namespace

std::unique_ptr<CudaUnit> make_conv_step(const Node& node, CudaDevice& device) {
  return std::make_unique<ConvStep>(node, device);
}

}  // namespace sluice::cuda
