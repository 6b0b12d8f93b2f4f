// dot: a batched matrix product (devices/detail/dot_layout.h). Floats and complex
// numbers go to cuBLAS (f16 and bf16 with f32 accumulation, as the host
// widens them); an operand already a stack of matrices in either orientation
// is passed as it is, any other is permuted into a temporary by the box-copy
// kernel first. Integers, and products too small for cuBLAS's call to pay,
// run a generated kernel (integers wrapping in their type).
// enqueue_gemm, the cuBLAS call, serves conv too.

#include <cublas_v2.h>
#include <fmt/format.h>

#include <limits>

#include <sluice/devices/cuda/cuda_check.h>
#include <sluice/devices/cuda/cuda_libraries.h>
#include <sluice/devices/cuda/cuda_steps.h>
#include <sluice/devices/cuda/kernel_cache.h>
#include <sluice/devices/detail/dot_layout.h>
#include <sluice/base/error.h>

namespace sluice::cuda {
namespace {

// Multiply-adds below which a dot runs the generated kernel rather than
// cuBLAS: cuBLAS's call costs the host several microseconds, more than a
// kernel launch, which a small product inside a loop pays every step.
constexpr int64_t kSmallDot = int64_t{1} << 16;

// cuBLAS's data and compute types for a dtype.
struct BlasTypes {
  cudaDataType data;
  cublasComputeType_t compute;
  bool double_scale;  // alpha and beta are doubles (else floats), complex for complex data
};

BlasTypes blas_types(DType t) {
  switch (t) {
    case DType::F16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    case DType::BF16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    case DType::F32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F, false};
    case DType::F64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    case DType::C64: return {CUDA_C_32F, CUBLAS_COMPUTE_32F, false};
    case DType::C128: return {CUDA_C_64F, CUBLAS_COMPUTE_64F, true};
    default: break;
  }
  throw InternalError(
      error_message("cuda: dot", fmt::format("no cuBLAS type for {}", dtype_name(t)), "", ""));
}

class DotStep final : public CudaUnit {
 public:
  DotStep(const Node& node, CudaDevice& device) : ops_(make_dot_operands(node)), dtype_(node.spec.dtype) {
    bytes_ = dtype_size(dtype_);
    const DotShape& d = ops_.shape;
    empty_ = node.spec.size() == 0;
    if (is_integer(dtype_) || d.batch * d.m * d.n * d.k <= kSmallDot) {
      kernel_ = load_kernels(dot_kernel(dtype_), device.arch()).front();
      geometry_ = loop_launch(d.batch * d.m * d.n, device.multiprocessors());
    }
    if (ops_.a_layout == DotLayout::Other || ops_.b_layout == DotLayout::Other || kernel_)
      load_kernels(box_copy_kernel(bytes_), device.arch());
  }

  void enqueue(StepContext& ctx, std::span<void* const> in, std::span<void* const> out) const override {
    const DotShape& d = ops_.shape;
    if (empty_) return;
    if (d.k == 0) {
      check(cudaMemsetAsync(out[0], 0, static_cast<size_t>(d.batch * d.m * d.n * bytes_), ctx.stream),
            ctx.device.who(), "dot: cudaMemsetAsync");
      return;
    }
    // The generated kernel takes plain layouts only; cuBLAS either orientation.
    const void* a = in[0];
    const void* b = in[1];
    DotLayout a_layout = ops_.a_layout, b_layout = ops_.b_layout;
    if (a_layout == DotLayout::Other || (kernel_ && a_layout != DotLayout::FreeFirst)) {
      a = permuted(ctx, a, ops_.a_permutation(), d.batch * d.m * d.k);
      a_layout = DotLayout::FreeFirst;
    }
    if (b_layout == DotLayout::Other || (kernel_ && b_layout != DotLayout::ContractFirst)) {
      b = permuted(ctx, b, ops_.b_permutation(), d.batch * d.k * d.n);
      b_layout = DotLayout::ContractFirst;
    }
    if (kernel_) {
      namespace w = dot_words;
      std::vector<Word> words(w::kWords, 0);
      words[w::kA] = word(a);
      words[w::kB] = word(b);
      words[w::kC] = word(out[0]);
      words[w::kBatch] = word(d.batch);
      words[w::kM] = word(d.m);
      words[w::kN] = word(d.n);
      words[w::kK] = word(d.k);
      launch(kernel_, geometry_, words, ctx.stream, ctx.device.who(), "dot");
      return;
    }
    gemm(ctx, a, a_layout, b, b_layout, out[0]);
  }

 private:
  const void* permuted(StepContext& ctx, const void* x, const Box& box, int64_t elements) const {
    std::shared_ptr<void> copy = ctx.device.allocate(static_cast<size_t>(elements * bytes_));
    ctx.keep.push_back(copy);
    enqueue_box_copy(ctx, bytes_, x, copy.get(), box);
    return copy.get();
  }

  void gemm(StepContext& ctx, const void* a, DotLayout a_layout, const void* b, DotLayout b_layout, void* c) const {
    const DotShape& d = ops_.shape;
    const bool a_plain = a_layout == DotLayout::FreeFirst, b_plain = b_layout == DotLayout::ContractFirst;
    enqueue_gemm(ctx, dtype_,
                 {.batch = d.batch, .m = d.m, .n = d.n, .k = d.k, .a = a, .a_transposed = !a_plain,
                  .lda = a_plain ? d.k : d.m, .stride_a = d.m * d.k, .b = b, .b_transposed = !b_plain,
                  .ldb = b_plain ? d.n : d.k, .stride_b = d.k * d.n, .c = c, .ldc = d.n, .stride_c = d.m * d.n},
                 "dot");
  }

  DotOperands ops_;
  DType dtype_;
  int bytes_ = 0;
  bool empty_ = false;
  cudaKernel_t kernel_ = nullptr;
  Launch geometry_;
};

}  // namespace

// Row-major C = A B is column-major Cᵀ = Bᵀ Aᵀ: cuBLAS gets b first. A
// row-major [m][k] read by column is Aᵀ as it is (no transpose), a [k][m]
// one needs one; likewise b.
void enqueue_gemm(StepContext& ctx, DType dtype, const RowMajorGemm& g, std::string_view what) {
  const BlasTypes t = blas_types(dtype);
  const double one[2] = {1, 0}, zero[2] = {0, 0};
  const float one_f[2] = {1, 0}, zero_f[2] = {0, 0};
  check_cublas(
      cublas_library().gemm_strided_batched_ex(
          ctx.device.cublas(ctx.stream), g.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
          g.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(g.n), static_cast<int>(g.m),
          static_cast<int>(g.k), t.double_scale ? static_cast<const void*>(one) : one_f, g.b, t.data,
          static_cast<int>(g.ldb), g.stride_b, g.a, t.data, static_cast<int>(g.lda), g.stride_a,
          t.double_scale ? static_cast<const void*>(zero) : zero_f, g.c, t.data, static_cast<int>(g.ldc),
          g.stride_c, static_cast<int>(g.batch), t.compute, CUBLAS_GEMM_DEFAULT),
      ctx.device.who(),
      fmt::format("{}: cublasGemmStridedBatchedEx ({}, {}x{}x{}, {} batches)", what, dtype_name(dtype), g.m,
                  g.n, g.k, g.batch));
}

std::unique_ptr<CudaUnit> make_dot_step(const Node& node, CudaDevice& device) {
  return std::make_unique<DotStep>(node, device);
}

}  // namespace sluice::cuda
