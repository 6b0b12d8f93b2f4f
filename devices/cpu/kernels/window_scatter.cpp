// WindowScatterMax, WindowScatterMin (XLA's select_and_scatter, the gradient
// of window_max/min): each window of x picks one element, the first largest
// (smallest) in row-major order within the window, a NaN counting as the
// largest (smallest) and the padding never; the window's source value is
// added at that element of a result that starts as init.
//
// Two passes. The picks depend on x alone and run in parallel over windows.
// The additions run in window order on one thread: overlapping windows may
// pick one element, and a fixed order keeps float sums reproducible; they
// are one add per window, cheap beside the picks' window-sized scans.

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/reduce_math.h>
#include <sluice/devices/cpu/kernels/reduce_split.h>
#include <sluice/ops/detail/dtype_dispatch.h>
#include <sluice/base/error.h>

namespace sluice::cpu {
namespace {

constexpr int64_t kNoPick = -1;  // a window wholly in the padding

struct Geometry {
  std::vector<int64_t> dims, step;         // x's dims and row-major strides
  std::vector<int64_t> windows;            // the number of windows per axis (source's dims)
  std::vector<int64_t> size, stride, low;  // the window per axis
  int64_t count = 1, window_size = 1;
};

Geometry geometry(const Node& node) {
  const Shape& x = node.spec.shape;
  const Shape& source = node.operands[1]->spec.shape;
  const Attrs& a = node.attrs;
  Geometry g;
  const auto rank = static_cast<size_t>(x.rank());
  g.dims = x.dims();
  g.step.assign(rank, 1);
  for (size_t k = rank; k-- > 1;) g.step[k - 1] = g.step[k] * g.dims[k];
  g.windows = source.dims();
  g.size = a.dims;
  g.stride = a.strides;
  for (const PadDim& p : a.padding) g.low.push_back(p.low);
  g.count = source.size();
  for (int64_t w : g.size) g.window_size *= w;
  return g;
}

// Whether a replaces b as the pick: strictly better, or a NaN over a number.
template <bool kMax, typename A>
bool better(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (a != a) return b == b;
  }
  return kMax ? a > b : a < b;
}

// picks[w]: the flat index in x of window w's pick, or kNoPick.
template <bool kMax, typename A>
void pick(const Geometry& g, const A* x, int64_t* picks) {
  const size_t rank = g.dims.size();
  split_items(g.count, g.window_size, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> j(rank), lo(rank), hi(rank), pos(rank);
    for (int64_t w = begin; w < end; ++w) {
      // The window's index per axis, and the positions of x it covers.
      bool empty = false;
      for (size_t k = rank, rest = static_cast<size_t>(w); k-- > 0;) {
        const auto n = static_cast<size_t>(g.windows[k]);
        j[k] = static_cast<int64_t>(rest % n);
        rest /= n;
        const int64_t start = j[k] * g.stride[k] - g.low[k];
        lo[k] = std::max<int64_t>(start, 0);
        hi[k] = std::min(start + g.size[k], g.dims[k]);
        empty = empty || lo[k] >= hi[k];
      }
      if (empty) {
        picks[w] = kNoPick;
        continue;
      }
      // Row-major over the covered box, keeping the first best.
      pos = lo;
      int64_t flat = 0;
      for (size_t k = 0; k < rank; ++k) flat += pos[k] * g.step[k];
      int64_t best = flat;
      for (;;) {
        if (better<kMax>(x[flat], x[best])) best = flat;
        size_t k = rank;
        while (k-- > 0) {
          if (++pos[k] < hi[k]) {
            flat += g.step[k];
            break;
          }
          flat -= (pos[k] - 1 - lo[k]) * g.step[k];
          pos[k] = lo[k];
        }
        if (k == static_cast<size_t>(-1)) break;
      }
      picks[w] = best;
    }
  });
}

template <typename A>
void pick_any(const Node& node, const Geometry& g, const A* x, int64_t* picks) {
  if (node.op == Op::WindowScatterMax) return pick<true>(g, x, picks);
  if (node.op == Op::WindowScatterMin) return pick<false>(g, x, picks);
  throw InternalError(error_message(
      "run_window_scatter", "op " + std::string(op_name(node.op)) + " is not a window scatter", "", ""));
}

// out = init everywhere, then source[w] added at picks[w]; A the type the
// sums run in (wrapping for integers).
template <typename A>
void scatter(const std::vector<int64_t>& picks, const A* source, A init, A* out, int64_t size) {
  std::fill(out, out + size, init);
  for (size_t w = 0; w < picks.size(); ++w)
    if (picks[w] != kNoPick) out[picks[w]] = wrap_add(out[picks[w]], source[w]);
}

}  // namespace

void run_window_scatter(const Node& node, std::span<const void* const> in, void* out) {
  const Geometry g = geometry(node);
  const Spec& x = node.operands[0]->spec;
  std::vector<int64_t> picks(static_cast<size_t>(g.count));
  visit_dtype(x.dtype, [&]<typename T>() {
    if constexpr (kIsComplex<T>) {
      throw TypeError(error_message(op_name(node.op), "argument x", "a real dtype", dtype_name(x.dtype)));
    } else if constexpr (kIsHalf<T>) {
      std::vector<float> wide(static_cast<size_t>(x.size()));
      kernel_table().widen[static_cast<int>(x.dtype)](wide.data(), in[0], nullptr, nullptr, x.size());
      pick_any(node, g, wide.data(), picks.data());
    } else {
      pick_any(node, g, static_cast<const T*>(in[0]), picks.data());
    }
  });
  const DType t = node.spec.dtype;
  const int64_t size = node.spec.size();
  visit_dtype(t, [&]<typename T>() {
    if constexpr (kIsHalf<T>) {
      // Summed in f32, each output rounded once.
      const KernelTable& table = kernel_table();
      std::vector<float> source(picks.size()), sums(static_cast<size_t>(size));
      float init = 0;
      table.widen[static_cast<int>(t)](source.data(), in[1], nullptr, nullptr, g.count);
      table.widen[static_cast<int>(t)](&init, in[2], nullptr, nullptr, 1);
      scatter(picks, source.data(), init, sums.data(), size);
      table.narrow[static_cast<int>(t)](out, sums.data(), nullptr, nullptr, size);
    } else {
      using A = WrapType<T>;
      scatter(picks, static_cast<const A*>(in[1]), *static_cast<const A*>(in[2]), static_cast<A*>(out), size);
    }
  });
}

}  // namespace sluice::cpu
