// Dot: a batched matrix product C[b][m][n] = sum_k A[b][m][k] * B[b][k][n],
// where b runs over the batch axes, m over a's free axes, n over b's free
// axes and k over the contracting axes (paired in order).
//
// f32 goes to oneDNN's sgemm, f64, c64 and c128 to OpenBLAS gemm. oneDNN
// chooses its kernels from the features the CPU reports, OpenBLAS 0.3.21
// from its model number, and a model newer than the library gets its oldest
// kernels: Prescott's SSE3 on a Xeon of model 207, where a 64x1024x1024
// product took 3,674 us against oneDNN's 898 (on one thread each). Where
// OpenBLAS knows the CPU the two are close (1,077 and 1,176 us), and oneDNN
// is the faster for a matrix-vector product (135 us against 384 for 1024^2).
// An operand already laid out as
// [batch][free][contract] or [batch][contract][free] is passed as it is (the
// transpose flag says which); any other is permuted into a scratch buffer
// first. f16 and bf16 are widened to f32, multiplied, and rounded back.
// Integers run dot_int.cpp's loops.
//
// Who shares out the cores is chosen per call: with the library on one
// thread (oneDNN always: one_omp_thread.h; OpenBLAS with
// ClientOptions::blas_threads = 1, or the application's setting), large
// products are cut into blocks of rows of C, one gemm call each, spread
// across oneTBB's workers, and many small batches are spread whole; with
// OpenBLAS on several threads (its default: the application's, which sluice
// leaves as it is), each gemm call is made in turn on the calling thread and
// OpenBLAS spreads it, rather than both pools at once each taking every core.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <oneapi/dnnl/dnnl.h>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include <sluice/base/error.h>
#include <sluice/devices/cpu/kernels/dot_layout.h>
#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/lapack.h>
#include <sluice/devices/cpu/kernels/one_omp_thread.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cpu {
namespace {

// Below this many multiply-adds a product runs on the calling thread: a
// wake-up of a worker (~25 us) costs more than the arithmetic.
constexpr int64_t kSerialMacs = int64_t{1} << 21;
// The fewest rows of C one gemm call is given when a product is cut up, so
// that packing b's panel stays a small part of each call.
constexpr int64_t kMinRows = 32;
// Blocks a product is cut into per worker. With one, a 1024^3 f32 product
// on 2 cores took 0.83-0.91 of oneDNN's own threaded sgemm in three runs of
// bench_dot; with two, 0.97-1.0.
constexpr int64_t kBlocksPerWorker = 2;

struct Gemm {
  bool trans_a = false, trans_b = false;
  int64_t lda = 0, ldb = 0;
};

// One gemm call on rows [m0, m1) of one batch.
template <typename T>
void gemm(const Gemm& g, const DotShape& d, const T* a, const T* b, T* c, int64_t m0, int64_t m1) {
  const T* a_rows = a + (g.trans_a ? m0 : m0 * g.lda);
  if constexpr (std::is_same_v<T, float>) {
    const OneOmpThread one;
    // Row-major, as sluice's layout is.
    const dnnl_status_t status = dnnl_sgemm(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', m1 - m0, d.n, d.k,
                                            1.0f, a_rows, g.lda, b, g.ldb, 0.0f, c + m0 * d.n, d.n);
    if (status != dnnl_success)
      throw DeviceError(error_message(
          "dot", "oneDNN's sgemm", "success",
          fmt::format("status {} for a {}x{}x{} product", static_cast<int>(status), m1 - m0, d.n, d.k)));
  } else {
    lapack::gemm({.trans_a = g.trans_a ? CblasTrans : CblasNoTrans,
                  .trans_b = g.trans_b ? CblasTrans : CblasNoTrans,
                  .m = static_cast<blasint>(m1 - m0),
                  .n = static_cast<blasint>(d.n),
                  .k = static_cast<blasint>(d.k),
                  .lda = static_cast<blasint>(g.lda),
                  .ldb = static_cast<blasint>(g.ldb)},
                 a_rows, b, c + m0 * d.n);
  }
}

// All batches, each cut into blocks of rows when there are fewer batches than
// kBlocksPerWorker a worker, spread across workers.
template <typename T>
void blas_dot(const DotShape& d, const Gemm& g, const T* a, const T* b, T* c) {
  const int64_t macs = d.batch * d.m * d.n * d.k;
  const bool spread_by_blas = !std::is_same_v<T, float> && blas().openblas_get_num_threads() > 1;
  const int64_t workers = spread_by_blas ? 1 : tbb::this_task_arena::max_concurrency();
  int64_t blocks = 1;
  if (macs >= kSerialMacs && d.batch < kBlocksPerWorker * workers) {
    // Few blocks: every gemm call packs all of b again (8 sequential calls
    // of a 1024^3 product take ~12% longer than 1). But more than one per
    // worker, so that a worker that starts late or runs slow is made up for.
    blocks = std::clamp<int64_t>((kBlocksPerWorker * workers + d.batch - 1) / d.batch, 1,
                                 std::max<int64_t>(1, d.m / kMinRows));
  }
  auto run = [&](int64_t item) {
    const int64_t batch = item / blocks, block = item % blocks;
    gemm(g, d, a + batch * d.m * d.k, b + batch * d.k * d.n, c + batch * d.m * d.n, d.m * block / blocks,
         d.m * (block + 1) / blocks);
  };
  const int64_t items = d.batch * blocks;
  if (macs < kSerialMacs || items == 1 || workers == 1) {
    for (int64_t i = 0; i < items; ++i) run(i);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kSerialMacs / std::max<int64_t>(1, macs / items));
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, items, grain), [&](const tbb::blocked_range<int64_t>& r) {
    for (int64_t i = r.begin(); i != r.end(); ++i) run(i);
  });
}

template <typename T>
void dot_blas_typed(const DotOperands& ops, const void* a, const void* b, T* c) {
  const DotShape& d = ops.shape;
  std::unique_ptr<T[]> a_copy, b_copy;
  Gemm g;
  // a: [m][k] (free then contract) is gemm's plain A; [k][m] is A transposed.
  if (ops.a_layout == DotLayout::Other) {
    a_copy.reset(new T[static_cast<size_t>(d.batch * d.m * d.k)]);
    permute_a(ops, a, a_copy.get());
    a = a_copy.get();
  }
  g.trans_a = ops.a_layout == DotLayout::ContractFirst;
  g.lda = g.trans_a ? d.m : d.k;
  // b: [k][n] (contract then free) is gemm's plain B; [n][k] is B transposed.
  if (ops.b_layout == DotLayout::Other) {
    b_copy.reset(new T[static_cast<size_t>(d.batch * d.k * d.n)]);
    permute_b(ops, b, b_copy.get());
    b = b_copy.get();
  }
  g.trans_b = ops.b_layout == DotLayout::FreeFirst;
  g.ldb = g.trans_b ? d.k : d.n;
  blas_dot(d, g, static_cast<const T*>(a), static_cast<const T*>(b), c);
}

// f16/bf16: widened to f32 (in gemm-ready layout) by the vector kernels,
// multiplied, rounded back.
void dot_half(const DotOperands& ops, const void* a, const void* b, void* c, DType dtype) {
  const DotShape& d = ops.shape;
  const KernelTable& table = kernel_table();
  const Kernel widen = table.widen[static_cast<int>(dtype)];
  DotOperands wide = ops;
  std::unique_ptr<uint16_t[]> a_copy, b_copy;
  const int64_t a_size = d.batch * d.m * d.k, b_size = d.batch * d.k * d.n, c_size = d.batch * d.m * d.n;
  if (ops.a_layout == DotLayout::Other) {
    a_copy.reset(new uint16_t[static_cast<size_t>(a_size)]);
    permute_a(ops, a, a_copy.get());
    a = a_copy.get();
    wide.a_layout = DotLayout::FreeFirst;
  }
  if (ops.b_layout == DotLayout::Other) {
    b_copy.reset(new uint16_t[static_cast<size_t>(b_size)]);
    permute_b(ops, b, b_copy.get());
    b = b_copy.get();
    wide.b_layout = DotLayout::ContractFirst;
  }
  std::unique_ptr<float[]> fa(new float[static_cast<size_t>(a_size)]), fb(new float[static_cast<size_t>(b_size)]),
      fc(new float[static_cast<size_t>(c_size)]);
  widen(fa.get(), a, nullptr, nullptr, a_size);
  widen(fb.get(), b, nullptr, nullptr, b_size);
  dot_blas_typed<float>(wide, fa.get(), fb.get(), fc.get());
  table.narrow[static_cast<int>(dtype)](c, fc.get(), nullptr, nullptr, c_size);
}

}  // namespace

void run_dot(const Node& node, const void* a, const void* b, void* out) {
  const DotOperands ops = make_dot_operands(node);
  const DotShape& d = ops.shape;
  if (node.spec.size() == 0) return;
  if (d.k == 0) {
    std::memset(out, 0, static_cast<size_t>(node.spec.bytes()));
    return;
  }
  switch (node.spec.dtype) {
    case DType::F32: return dot_blas_typed(ops, a, b, static_cast<float*>(out));
    case DType::F64: return dot_blas_typed(ops, a, b, static_cast<double*>(out));
    case DType::C64: return dot_blas_typed(ops, a, b, static_cast<complex64*>(out));
    case DType::C128: return dot_blas_typed(ops, a, b, static_cast<complex128*>(out));
    case DType::F16:
    case DType::BF16: return dot_half(ops, a, b, out, node.spec.dtype);
    default: return dot_integers(ops, a, b, out);
  }
}

}  // namespace sluice::cpu
