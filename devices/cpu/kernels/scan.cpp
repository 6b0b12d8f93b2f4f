// CumulativeSum along attrs.axis, from the end when attrs.reverse. The input
// is viewed as [outer][n][inner]: with inner == 1 each row is one running
// sum; otherwise a running row of `inner` sums walks down the axis,
// vectorised along the row. f16 and bf16 run their sums in f32 (each output
// rounded from its f32 sum, so rounding does not accumulate); integers wrap
// in their type.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "devices/cpu/kernels/isa.h"
#include "devices/cpu/kernels/kernels.h"
#include "devices/cpu/kernels/reduce_math.h"
#include "devices/cpu/kernels/reduce_split.h"
#include "ops/dtype_dispatch.h"

namespace sluice::cpu {
namespace {

constexpr int64_t kTileColumns = 1024;

// T: unsigned integers (wrapping), floats, complex numbers.
template <typename T>
void scan(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool reverse) {
  // Position of the i-th step along the axis.
  auto at = [&](int64_t i) { return reverse ? n - 1 - i : i; };
  if (inner == 1) {
    split_items(outer, n, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* x = in + o * n;
        T* y = out + o * n;
        T acc = T(0);
        for (int64_t i = 0; i < n; ++i) {
          acc = wrap_add(acc, x[at(i)]);
          y[at(i)] = acc;
        }
      }
    });
    return;
  }
  // Each output row is the previous output row plus the input row.
  const int64_t tiles = (inner + kTileColumns - 1) / kTileColumns;
  split_items(outer * tiles, n * std::min(inner, kTileColumns), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / tiles, c0 = (item % tiles) * kTileColumns, w = std::min(kTileColumns, inner - c0);
      const int64_t first = (o * n + at(0)) * inner + c0;
      std::copy(in + first, in + first + w, out + first);
      for (int64_t i = 1; i < n; ++i) {
        const int64_t offset = (o * n + at(i)) * inner + c0;
        const T* __restrict x = in + offset;
        const T* __restrict prev = out + (o * n + at(i - 1)) * inner + c0;
        T* __restrict y = out + offset;
        for (int64_t c = 0; c < w; ++c) y[c] = wrap_add(prev[c], x[c]);
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
  const bool reverse = node.attrs.reverse;
  if (spec.dtype == DType::F16 || spec.dtype == DType::BF16) {
    // Summed in f32, each output rounded once from its f32 sum.
    const KernelTable& table = kernel_table();
    const int t = static_cast<int>(spec.dtype);
    std::vector<float> x(static_cast<size_t>(spec.size())), y(x.size());
    table.widen[t](x.data(), in, nullptr, nullptr, spec.size());
    scan(x.data(), y.data(), outer, n, inner, reverse);
    table.narrow[t](out, y.data(), nullptr, nullptr, spec.size());
    return;
  }
  visit_dtype(spec.dtype, [&]<typename T>() {
    if constexpr (!kIsHalf<T>) {
      // Wrapping sums of signed and unsigned integers have the same bits.
      using S = WrapType<T>;
      scan(static_cast<const S*>(in), static_cast<S*>(out), outer, n, inner, reverse);
    }
  });
}

}  // namespace sluice::cpu
