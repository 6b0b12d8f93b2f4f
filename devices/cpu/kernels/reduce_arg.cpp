// Argmax and Argmin: the s64 index of the extreme element along one axis, or
// into the flattened tensor (attrs.axis == -1). Ties go to the first
// (TieBreak::Low) or the last (High) occurrence; NaN is the extreme of both,
// and the first NaN wins whatever the tie break, as numpy.

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "devices/cpu/kernels/reduce_internal.h"
#include "devices/cpu/kernels/reduce_math.h"
#include "devices/cpu/kernels/split_work.h"
#include "ops/dtype_dispatch.h"

namespace sluice::cpu {
namespace {

constexpr int64_t kTileColumns = 1024;
constexpr int64_t kEnoughItems = 16;
constexpr int64_t kMaxSplits = 64;

// Whether x, met after `best`, replaces it.
template <typename A, bool kMax, bool kHigh>
inline bool replaces(A x, A best) {
  if constexpr (std::is_floating_point_v<A>) {
    if (best != best) return false;
    if (x != x) return true;
  }
  if constexpr (kHigh) {
    return kMax ? !(x < best) : !(x > best);
  } else {
    return kMax ? x > best : x < best;
  }
}

template <typename T, bool kMax, bool kHigh>
void arg_reduce(const T* in, int64_t* out, int64_t outer, int64_t n, int64_t inner) {
  using A = Arith<T>;
  if (n == 0) {
    std::fill(out, out + outer * inner, int64_t{0});
    return;
  }
  if (inner == 1) {
    // Rows, each cut into `splits` pieces whose winners are merged in order.
    const int64_t splits = outer >= kEnoughItems ? 1 : std::clamp<int64_t>(n / kGrainElements, 1, kMaxSplits);
    std::vector<A> best(static_cast<size_t>(outer * splits));
    std::vector<int64_t> index(best.size());
    split_work(outer * splits, n / splits, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / splits, s = t % splits;
        const int64_t i0 = n * s / splits, i1 = n * (s + 1) / splits;
        const T* row = in + o * n;
        A b = to_arith(row[i0]);
        int64_t bi = i0;
        for (int64_t i = i0 + 1; i < i1; ++i) {
          const A x = to_arith(row[i]);
          if (replaces<A, kMax, kHigh>(x, b)) {
            b = x;
            bi = i;
          }
        }
        best[static_cast<size_t>(t)] = b;
        index[static_cast<size_t>(t)] = bi;
      }
    });
    for (int64_t o = 0; o < outer; ++o) {
      size_t w = static_cast<size_t>(o * splits);
      for (size_t t = w + 1; t < static_cast<size_t>((o + 1) * splits); ++t) {
        if (replaces<A, kMax, kHigh>(best[t], best[w])) w = t;
      }
      out[o] = index[w];
    }
    return;
  }
  // Columns: each tile keeps its running winners while walking down the axis.
  const int64_t tiles = (inner + kTileColumns - 1) / kTileColumns;
  split_work(outer * tiles, n * std::min(inner, kTileColumns), [&](int64_t begin, int64_t end) {
    std::vector<A> best(static_cast<size_t>(std::min(inner, kTileColumns)));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / tiles, c0 = (t % tiles) * kTileColumns, w = std::min(kTileColumns, inner - c0);
      const T* base = in + o * n * inner + c0;
      int64_t* idx = out + o * inner + c0;
      for (int64_t j = 0; j < w; ++j) {
        best[static_cast<size_t>(j)] = to_arith(base[j]);
        idx[j] = 0;
      }
      for (int64_t i = 1; i < n; ++i) {
        const T* row = base + i * inner;
        for (int64_t j = 0; j < w; ++j) {
          const A x = to_arith(row[j]);
          if (replaces<A, kMax, kHigh>(x, best[static_cast<size_t>(j)])) {
            best[static_cast<size_t>(j)] = x;
            idx[j] = i;
          }
        }
      }
    }
  });
}

}  // namespace

void run_reduce_arg(const Node& node, const void* in, void* out) {
  const Shape& shape = node.operands[0]->spec.shape;
  int64_t outer = 1, n = shape.size(), inner = 1;
  if (node.attrs.axis >= 0) {
    const int axis = static_cast<int>(node.attrs.axis);
    n = shape.dim(axis);
    for (int k = 0; k < axis; ++k) outer *= shape.dim(k);
    for (int k = axis + 1; k < shape.rank(); ++k) inner *= shape.dim(k);
  }
  if (outer == 0 || inner == 0) return;
  const bool max = node.op == Op::Argmax, high = node.attrs.tie_break == TieBreak::High;
  auto* dst = static_cast<int64_t*>(out);
  visit_dtype(node.operands[0]->spec.dtype, [&]<typename T>() {
    if constexpr (kIsComplex<T>) {
      throw_not_real(node);
    } else {
      const auto* src = static_cast<const T*>(in);
      if (max && high) arg_reduce<T, true, true>(src, dst, outer, n, inner);
      if (max && !high) arg_reduce<T, true, false>(src, dst, outer, n, inner);
      if (!max && high) arg_reduce<T, false, true>(src, dst, outer, n, inner);
      if (!max && !high) arg_reduce<T, false, false>(src, dst, outer, n, inner);
    }
  });
}

}  // namespace sluice::cpu
