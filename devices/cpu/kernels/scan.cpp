// CumulativeSum along attrs.axis, from the end when attrs.reverse. The input
// is viewed as [outer][n][inner]: with inner == 1 each row is one running
// sum; otherwise a running row of `inner` sums walks down the axis,
// vectorised along the row. f16 and bf16 run their sums in f32 (each output
// rounded from the f32 sum, so rounding does not accumulate); integers wrap
// in their type.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/reduce_math.h"
#include "devices/cpu/kernels/split_work.h"
#include "ops/dtype_dispatch.h"

namespace sluice::cpu {
namespace {

constexpr int64_t kTileColumns = 1024;

template <typename T>
void scan(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool reverse) {
  using A = Arith<T>;
  // Position of the i-th step along the axis.
  auto at = [&](int64_t i) { return reverse ? n - 1 - i : i; };
  if (inner == 1) {
    split_work(outer, n, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* x = in + o * n;
        T* y = out + o * n;
        A acc = A(0);
        for (int64_t i = 0; i < n; ++i) {
          acc = wrap_add(acc, to_arith(x[at(i)]));
          y[at(i)] = from_arith<T>(acc);
        }
      }
    });
    return;
  }
  const int64_t tiles = (inner + kTileColumns - 1) / kTileColumns;
  split_work(outer * tiles, n * std::min(inner, kTileColumns), [&](int64_t begin, int64_t end) {
    std::vector<A> acc(static_cast<size_t>(std::min(inner, kTileColumns)));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / tiles, c0 = (item % tiles) * kTileColumns, w = std::min(kTileColumns, inner - c0);
      A* __restrict sum = acc.data();
      std::fill(sum, sum + w, A(0));
      for (int64_t i = 0; i < n; ++i) {
        const int64_t offset = (o * n + at(i)) * inner + c0;
        const T* __restrict x = in + offset;
        T* __restrict y = out + offset;
        for (int64_t c = 0; c < w; ++c) {
          sum[c] = wrap_add(sum[c], to_arith(x[c]));
          y[c] = from_arith<T>(sum[c]);
        }
      }
    }
  });
}

}  // namespace

void run_scan(const Node& node, const void* in, void* out) {
  const Spec& spec = node.operands[0]->spec;
  const int axis = static_cast<int>(node.attrs.axis);
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= spec.shape.dim(k);
  for (int k = axis + 1; k < spec.shape.rank(); ++k) inner *= spec.shape.dim(k);
  const int64_t n = spec.shape.rank() == 0 ? 1 : spec.shape.dim(axis);
  if (outer * n * inner == 0) return;
  visit_dtype(spec.dtype, [&]<typename T>() {
    scan<T>(static_cast<const T*>(in), static_cast<T*>(out), outer, n, inner, node.attrs.reverse);
  });
}

}  // namespace sluice::cpu
