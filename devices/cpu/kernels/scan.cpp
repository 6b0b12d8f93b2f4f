// CumulativeSum, CumulativeProduct, CumulativeMax, CumulativeMin along
// attrs.axis, from the end when attrs.reverse. The input is viewed as
// [outer][n][inner]: with inner == 1 each row is one running value;
// otherwise a running row of `inner` values walks down the axis, vectorised
// along the row. f16 and bf16 run in f32 (each output rounded from its f32
// value, so rounding does not accumulate); integers wrap in their type; max
// and min propagate NaN.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/reduce_math.h>
#include <sluice/devices/cpu/kernels/reduce_split.h>
#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/base/error.h>

namespace sluice::cpu {
namespace {

constexpr int64_t kTileColumns = 1024;

// T: unsigned integers (wrapping), floats, complex numbers (sums and products).
template <typename T, typename Combine>
void scan(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool reverse, Combine combine) {
  // Position of the i-th step along the axis.
  auto at = [&](int64_t i) { return reverse ? n - 1 - i : i; };
  if (inner == 1) {
    split_items(outer, n, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* x = in + o * n;
        T* y = out + o * n;
        T acc = x[at(0)];
        y[at(0)] = acc;
        for (int64_t i = 1; i < n; ++i) {
          acc = combine(acc, x[at(i)]);
          y[at(i)] = acc;
        }
      }
    });
    return;
  }
  // Each output row is the previous output row combined with the input row.
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
        for (int64_t c = 0; c < w; ++c) y[c] = combine(prev[c], x[c]);
      }
    }
  });
}

// The scan of `op` on values of T.
template <typename T>
void scan_op(Op op, const T* in, T* out, int64_t outer, int64_t n, int64_t inner, bool reverse) {
  switch (op) {
    case Op::CumulativeSum:
      return scan(in, out, outer, n, inner, reverse, [](T a, T b) { return wrap_add(a, b); });
    case Op::CumulativeProduct:
      return scan(in, out, outer, n, inner, reverse, [](T a, T b) { return wrap_mul(a, b); });
    case Op::CumulativeMax:
    case Op::CumulativeMin:
      if constexpr (kIsComplex<T>) {
        throw TypeError(error_message(op_name(op), "argument x", "a real dtype", "a complex one"));
      } else if (op == Op::CumulativeMax) {
        return scan(in, out, outer, n, inner, reverse, [](T a, T b) { return max_nan(a, b); });
      } else {
        return scan(in, out, outer, n, inner, reverse, [](T a, T b) { return min_nan(a, b); });
      }
    default:
      throw InternalError(
          error_message("run_scan", "op " + std::string(op_name(op)) + " is not a cumulative scan", "", ""));
  }
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
    // Run in f32, each output rounded once from its f32 value.
    const KernelTable& table = kernel_table();
    const int t = static_cast<int>(spec.dtype);
    std::vector<float> x(static_cast<size_t>(spec.size())), y(x.size());
    table.widen[t](x.data(), in, nullptr, nullptr, spec.size());
    scan_op(node.op, x.data(), y.data(), outer, n, inner, reverse);
    table.narrow[t](out, y.data(), nullptr, nullptr, spec.size());
    return;
  }
  visit_dtype(spec.dtype, [&]<typename T>() {
    if constexpr (!kIsHalf<T>) {
      // Wrapping sums and products of signed and unsigned integers have the
      // same bits; max and min must compare in the signed type.
      if (node.op == Op::CumulativeMax || node.op == Op::CumulativeMin) {
        scan_op(node.op, static_cast<const T*>(in), static_cast<T*>(out), outer, n, inner, reverse);
      } else {
        using S = WrapType<T>;
        scan_op(node.op, static_cast<const S*>(in), static_cast<S*>(out), outer, n, inner, reverse);
      }
    }
  });
}

}  // namespace sluice::cpu
