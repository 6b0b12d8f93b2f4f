// Dot of integers: blocked i-k-j loops, vectorised along the rows of b and
// c. Integers wrap in their own type, as XLA's integer dot does (computed
// unsigned: signed overflow would be undefined).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include <sluice/devices/cpu/kernels/dot_layout.h>
#include <sluice/devices/cpu/kernels/split_work.h>
#include <sluice/ops/detail/dtype_dispatch.h>

namespace sluice::cpu {
namespace {

// Depth of one block of the contraction, and a width that keeps a block of
// b (kDepth rows) within about 256 KiB of cache.
constexpr int64_t kDepth = 256;
constexpr int64_t kBlockBytes = int64_t{256} * 1024;

// Rows [m0, m1) of c = a b, a: [m][k], b: [k][n], c: [m][n].
template <typename U>
void gemm_rows(const U* a, const U* b, U* c, int64_t m0, int64_t m1, int64_t n, int64_t k) {
  // Products of narrow types are formed in unsigned int: U would promote to
  // (signed) int, and 65535 * 65535 overflows it.
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  const int64_t width = std::max<int64_t>(64, kBlockBytes / (kDepth * static_cast<int64_t>(sizeof(U))));
  std::fill(c + m0 * n, c + m1 * n, U(0));
  for (int64_t j0 = 0; j0 < n; j0 += width) {
    const int64_t j1 = std::min(n, j0 + width);
    for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
      const int64_t k1 = std::min(k, k0 + kDepth);
      for (int64_t i = m0; i < m1; ++i) {
        U* __restrict crow = c + i * n;
        for (int64_t kk = k0; kk < k1; ++kk) {
          const W av = a[i * k + kk];
          if (av == 0) continue;
          const U* __restrict brow = b + kk * n;
          for (int64_t j = j0; j < j1; ++j) crow[j] = static_cast<U>(static_cast<W>(crow[j]) + av * static_cast<W>(brow[j]));
        }
      }
    }
  }
}

template <typename U>
void dot_loops(const DotOperands& ops, const void* a, const void* b, void* out) {
  const DotShape& d = ops.shape;
  std::unique_ptr<U[]> a_copy, b_copy;
  if (ops.a_layout != DotLayout::FreeFirst) {
    a_copy.reset(new U[static_cast<size_t>(d.batch * d.m * d.k)]);
    permute_a(ops, a, a_copy.get());
    a = a_copy.get();
  }
  if (ops.b_layout != DotLayout::ContractFirst) {
    b_copy.reset(new U[static_cast<size_t>(d.batch * d.k * d.n)]);
    permute_b(ops, b, b_copy.get());
    b = b_copy.get();
  }
  const U* pa = static_cast<const U*>(a);
  const U* pb = static_cast<const U*>(b);
  U* pc = static_cast<U*>(out);
  // Items are rows of c; each row costs n * k multiply-adds.
  split_work(d.batch * d.m, d.n * d.k, [&](int64_t begin, int64_t end) {
    while (begin < end) {
      const int64_t batch = begin / d.m, row = begin % d.m;
      const int64_t rows = std::min(end - begin, d.m - row);
      gemm_rows<U>(pa + batch * d.m * d.k, pb + batch * d.k * d.n, pc + batch * d.m * d.n, row,
                             row + rows, d.n, d.k);
      begin += rows;
    }
  });
}

}  // namespace

void dot_integers(const DotOperands& ops, const void* a, const void* b, void* out) {
  visit_dtype(ops.a_spec.dtype, [&]<typename T>() {
    if constexpr (std::is_integral_v<T>) dot_loops<std::make_unsigned_t<T>>(ops, a, b, out);
  });
}

}  // namespace sluice::cpu
