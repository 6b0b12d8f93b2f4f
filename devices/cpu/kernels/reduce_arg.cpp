// Argmax and Argmin: the s64 index of the extreme element along one axis, or
// into the flattened tensor (attrs.axis == -1). Ties go to the first
// (TieBreak::Low) or the last (High) occurrence; NaN is the extreme of both
// (as numpy and Nx), and NaNs tie with each other: the first NaN wins with
// Low (numpy's answer), the last with High.

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/devices/cpu/kernels/reduce_internal.h>
#include <sluice/devices/cpu/kernels/reduce_math.h>
#include <sluice/devices/cpu/kernels/reduce_split.h>
#include <sluice/ops/detail/dtype_dispatch.h>

namespace sluice::cpu {
namespace {

constexpr int64_t kTileColumns = 1024;
constexpr int64_t kEnoughItems = 16;
constexpr int64_t kMaxSplits = 64;

struct ArgRule {
  bool max, high;  // argmax (else argmin); ties to the last (else the first)

  // Whether x, met after `best`, replaces it.
  template <typename T>
  bool replaces(T x, T best) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (x != x) return best == best || high;
      if (best != best) return false;
    }
    return (max ? x > best : x < best) || (high && x == best);
  }
};

template <typename T>
void arg_reduce(const T* in, int64_t* out, int64_t outer, int64_t n, int64_t inner, ArgRule rule) {
  if (n == 0) {
    std::fill(out, out + outer * inner, int64_t{0});
    return;
  }
  if (inner == 1) {
    // Rows, each cut into `splits` pieces whose winners are merged in order.
    const int64_t splits = outer >= kEnoughItems ? 1 : std::clamp<int64_t>(n / kGrainElements, 1, kMaxSplits);
    std::vector<T> best(static_cast<size_t>(outer * splits));
    std::vector<int64_t> index(best.size());
    split_items(outer * splits, n / splits, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / splits, s = t % splits;
        const int64_t i0 = n * s / splits, i1 = n * (s + 1) / splits;
        const T* row = in + o * n;
        T b = row[i0];
        int64_t bi = i0;
        for (int64_t i = i0 + 1; i < i1; ++i) {
          const T x = row[i];
          if (rule.replaces(x, b)) {
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
        if (rule.replaces(best[t], best[w])) w = t;
      }
      out[o] = index[w];
    }
    return;
  }
  // Columns: each tile keeps its running winners while walking down the axis.
  const int64_t tiles = (inner + kTileColumns - 1) / kTileColumns;
  split_items(outer * tiles, n * std::min(inner, kTileColumns), [&](int64_t begin, int64_t end) {
    std::vector<T> best(static_cast<size_t>(std::min(inner, kTileColumns)));
    for (int64_t t = begin; t < end; ++t) {
      const int64_t o = t / tiles, c0 = (t % tiles) * kTileColumns, w = std::min(kTileColumns, inner - c0);
      const T* base = in + o * n * inner + c0;
      int64_t* idx = out + o * inner + c0;
      for (int64_t j = 0; j < w; ++j) {
        best[static_cast<size_t>(j)] = base[j];
        idx[j] = 0;
      }
      for (int64_t i = 1; i < n; ++i) {
        const T* row = base + i * inner;
        for (int64_t j = 0; j < w; ++j) {
          const T x = row[j];
          if (rule.replaces(x, best[static_cast<size_t>(j)])) {
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
  const Spec& spec = node.operands[0]->spec;
  int64_t outer = 1, n = spec.size(), inner = 1;
  if (node.attrs.axis >= 0) {
    const int axis = static_cast<int>(node.attrs.axis);
    n = spec.shape.dim(axis);
    for (int k = 0; k < axis; ++k) outer *= spec.shape.dim(k);
    for (int k = axis + 1; k < spec.shape.rank(); ++k) inner *= spec.shape.dim(k);
  }
  if (outer == 0 || inner == 0) return;
  const ArgRule rule{node.op == Op::Argmax, node.attrs.tie_break == TieBreak::High};
  auto* dst = static_cast<int64_t*>(out);
  if (spec.dtype == DType::F16 || spec.dtype == DType::BF16) {
    // Widened to f32 (exactly) by the vector kernels.
    std::vector<float> wide(static_cast<size_t>(spec.size()));
    kernel_table().widen[static_cast<int>(spec.dtype)](wide.data(), in, nullptr, nullptr, spec.size());
    return arg_reduce(wide.data(), dst, outer, n, inner, rule);
  }
  visit_dtype(spec.dtype, [&]<typename T>() {
    if constexpr (kIsComplex<T>) {
      throw_not_real(node);
    } else if constexpr (!kIsHalf<T>) {
      arg_reduce(static_cast<const T*>(in), dst, outer, n, inner, rule);
    }
  });
}

}  // namespace sluice::cpu
