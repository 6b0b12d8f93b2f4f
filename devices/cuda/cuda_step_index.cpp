// Gather and scatter. indices' last axis (k entries) picks, per index row, a
// block of x (the product of x's dims from k on), its entries clamped into
// their axes. gather: a thread per element of the result. indexed_add: x
// copied to the result, then a thread per update element adding it
// atomically. indexed_put: x copied, then each row claims its block (the
// largest row wins, in a scratch of one claim per block of x) and the
// claiming rows' elements are written, so that the last row wins as on the
// host. The kernels are templates of kernels/algorithms.cuh.

#include <fmt/format.h>

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>

namespace sluice::cuda {
namespace {

class IndexStep final : public CudaUnit {
 public:
  IndexStep(const Node& node, CudaDevice& device) : op_(node.op), what_(op_name(node.op)) {
    namespace w = index_words;
    const Spec& x = node.operands[0]->spec;
    const Spec& indices = node.operands[1]->spec;
    const int k = static_cast<int>(indices.shape.dim(indices.shape.rank() - 1));
    rows_ = k == 0 ? 0 : indices.size() / k;
    block_ = 1;
    for (int i = k; i < x.shape.rank(); ++i) block_ *= x.shape.dim(i);
    words_.assign(w::kWords, 0);
    words_[w::kRows] = word(rows_);
    words_[w::kBlock] = word(block_);
    words_[w::kK] = word(int64_t{k});
    words_[w::kIndexKind] = word(int64_t{dtype_size(indices.dtype) * 2 + (dtype_kind(indices.dtype) == DTypeKind::Signed)});
    int64_t stride = 1;
    for (int q = k - 1; q >= 0; --q) {
      words_[w::kDims + q] = word(x.shape.dim(q));
      words_[w::kStrides + q] = word(stride);
      stride *= x.shape.dim(q);
    }
    x_bytes_ = x.bytes();
    blocks_ = block_ == 0 ? 0 : x.shape.size() / block_;
    const int elem_bytes = dtype_size(x.dtype);
    switch (op_) {
      case Op::Gather: kernels_ = load_kernels(gather_kernel(elem_bytes), device.arch()); break;
      case Op::IndexedAdd: kernels_ = load_kernels(scatter_add_kernel(node.spec.dtype), device.arch()); break;
      default: kernels_ = load_kernels(put_kernel(elem_bytes), device.arch()); break;
    }
    rows_launch_ = loop_launch(rows_, device.multiprocessors());
    elements_launch_ = loop_launch(rows_ * block_, device.multiprocessors());
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    namespace w = index_words;
    std::vector<Word> words = words_;
    words[w::kIndices] = word(in[1]);
    words[w::kResult] = word(out[0]);
    const std::string& who = ctx.device.who();
    if (op_ == Op::Gather) {
      words[w::kSource] = word(in[0]);
      if (rows_ * block_ > 0) launch(kernels_[0], elements_launch_, words, ctx.stream, who, what_);
      return;
    }
    if (out[0] != in[0] && x_bytes_ > 0)
      check(cudaMemcpyAsync(out[0], in[0], static_cast<size_t>(x_bytes_), cudaMemcpyDeviceToDevice, ctx.stream), who,
            what_ + ": copying x");
    if (rows_ * block_ == 0 || blocks_ == 0) return;
    words[w::kSource] = word(in[2]);
    if (op_ == Op::IndexedAdd) {
      launch(kernels_[0], elements_launch_, words, ctx.stream, who, what_);
      return;
    }
    std::shared_ptr<void> claims = ctx.device.allocate(static_cast<size_t>(blocks_) * sizeof(int64_t));
    ctx.keep.push_back(claims);
    check(cudaMemsetAsync(claims.get(), 0xff, static_cast<size_t>(blocks_) * sizeof(int64_t), ctx.stream), who,
          what_ + ": clearing the claims");  // every claim -1
    words[w::kClaims] = word(claims.get());
    launch(kernels_[0], rows_launch_, words, ctx.stream, who, what_ + ": claims");
    launch(kernels_[1], elements_launch_, words, ctx.stream, who, what_);
  }

 private:
  Op op_;
  std::string what_;
  std::vector<Word> words_;
  int64_t rows_ = 0, block_ = 1, blocks_ = 0, x_bytes_ = 0;
  std::vector<cudaKernel_t> kernels_;
  Launch rows_launch_, elements_launch_;
};

}  // namespace

std::unique_ptr<CudaUnit> make_index_step(const Node& node, CudaDevice& device) {
  return std::make_unique<IndexStep>(node, device);
}

}  // namespace sluice::cuda
