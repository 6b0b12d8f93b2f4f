// WindowSum, WindowProduct, WindowMax, WindowMin over any rank, with strides
// and padding.
//
// A box window is separable: combining over the box equals combining along
// one axis, then the next, because padding holds the identity (0, 1,
// -inf, +inf) and so contributes nothing. Each axis whose window, stride or
// padding is not trivial gets one pass; the passes that shrink the tensor
// most run first. f16 and bf16 are combined in f32 and rounded once at the
// end; integers wrap in their type.
//
// One pass views its input as [outer][d][inner] and writes [outer][d_out][inner]
// with out[j] = combine of in[j * stride - low + t], t in [0, window), over
// positions inside [0, d). Along the last axis the loop over outputs is the
// inner one (vectorised where every position is inside); along other axes the
// loop over `inner` is.

#include <algorithm>
#include <cstdint>
#include <numeric>
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

// Outputs of one row handled together along the last axis: the input they
// read stays in cache across the window's offsets.
constexpr int64_t kTile = 1024;

template <typename A>
struct SumWindow {
  static A identity() { return A(0); }
  static A combine(A a, A b) { return wrap_add(a, b); }
};
template <typename A>
struct ProductWindow {
  static A identity() { return A(1); }
  static A combine(A a, A b) { return wrap_mul(a, b); }
};
template <typename A>
struct MaxWindow {
  static A identity() { return lowest<A>(); }
  static A combine(A a, A b) { return max_nan(a, b); }
};
template <typename A>
struct MinWindow {
  static A identity() { return highest<A>(); }
  static A combine(A a, A b) { return min_nan(a, b); }
};

// window_min of pred: min over truth bytes with identity 1 (true), where
// u8's identity 255 would leak into the output from the padding.
template <typename A>
struct PredMinWindow {
  static A identity() { return A(1); }
  static A combine(A a, A b) { return static_cast<A>(a & b); }
};

struct AxisPass {
  int64_t outer, d, inner;
  int64_t window, stride, low, d_out;
};

// [first, last) of outputs j whose window lies wholly inside [0, d).
std::pair<int64_t, int64_t> interior(const AxisPass& p) {
  // j * stride - low >= 0 and j * stride - low + window <= d.
  const int64_t first = p.low <= 0 ? 0 : (p.low + p.stride - 1) / p.stride;
  const int64_t room = p.d + p.low - p.window;
  const int64_t last = room < 0 ? 0 : std::min(p.d_out, room / p.stride + 1);
  return {std::min(first, last), last};
}

// One output of a row along the last axis, clipped to the positions inside:
// for the few outputs whose window reaches into the padding.
template <typename C, typename A>
A clipped(const AxisPass& p, const A* x, int64_t j) {
  const int64_t start = j * p.stride - p.low;
  A acc = C::identity();
  for (int64_t t = std::max<int64_t>(0, -start); t < std::min(p.window, p.d - start); ++t) {
    acc = C::combine(acc, x[start + t]);
  }
  return acc;
}

template <typename C, typename A>
void window_pass(const AxisPass& p, const A* in, A* out) {
  if (p.window == 0) {
    std::fill(out, out + p.outer * p.d_out * p.inner, C::identity());
    return;
  }
  const auto [first, last] = interior(p);
  if (p.inner == 1) {
    const int64_t tiles = (p.d_out + kTile - 1) / kTile;
    split_items(p.outer * tiles, std::min(p.d_out, kTile) * p.window, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t o = item / tiles, j0 = (item % tiles) * kTile, j1 = std::min(p.d_out, j0 + kTile);
        const A* __restrict x = in + o * p.d;
        A* __restrict y = out + o * p.d_out;
        const int64_t a = std::clamp(first, j0, j1), b = std::clamp(last, a, j1);
        for (int64_t j = j0; j < a; ++j) y[j] = clipped<C>(p, x, j);
        for (int64_t j = b; j < j1; ++j) y[j] = clipped<C>(p, x, j);
        if (a == b) continue;
        A* __restrict ya = y + a;
        const int64_t n = b - a, s = p.stride;
        for (int64_t i = 0; i < n; ++i) ya[i] = x[a * s - p.low + i * s];
        for (int64_t t = 1; t < p.window; ++t) {
          const A* __restrict xt = x + a * s - p.low + t;
          for (int64_t i = 0; i < n; ++i) ya[i] = C::combine(ya[i], xt[i * s]);
        }
      }
    });
    return;
  }
  split_items(p.outer * p.d_out, p.inner * std::max<int64_t>(1, p.window), [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / p.d_out, j = item % p.d_out;
      A* __restrict y = out + item * p.inner;
      std::fill(y, y + p.inner, C::identity());
      const int64_t start = j * p.stride - p.low;
      for (int64_t t = std::max<int64_t>(0, -start); t < std::min(p.window, p.d - start); ++t) {
        const A* __restrict x = in + (o * p.d + start + t) * p.inner;
        for (int64_t c = 0; c < p.inner; ++c) y[c] = C::combine(y[c], x[c]);
      }
    }
  });
}

template <typename T, template <typename> class Combine>
void window(const Node& node, const void* in, void* out) {
  using A = Arith<T>;
  using C = Combine<A>;
  const Shape& shape = node.operands[0]->spec.shape;
  const Attrs& at = node.attrs;
  if (node.spec.size() == 0) return;
  // One pass per axis with something to do; the most shrinking first.
  std::vector<int> axes;
  for (int k = 0; k < shape.rank(); ++k) {
    const PadDim pad = at.padding.empty() ? PadDim{} : at.padding[static_cast<size_t>(k)];
    const int64_t stride = at.strides.empty() ? 1 : at.strides[static_cast<size_t>(k)];
    if (at.dims[static_cast<size_t>(k)] != 1 || stride != 1 || pad.low != 0 || pad.high != 0) axes.push_back(k);
  }
  std::stable_sort(axes.begin(), axes.end(), [&](int x, int y) {
    return node.spec.shape.dim(x) * shape.dim(y) < node.spec.shape.dim(y) * shape.dim(x);
  });
  std::vector<int64_t> dims = shape.dims();
  const int64_t in_size = shape.size();
  // Values in compute type: the input itself, or widened (f16/bf16).
  std::vector<A> widened, ping, pong;
  const A* src = nullptr;
  if constexpr (std::is_same_v<A, T>) {
    src = static_cast<const A*>(in);
  } else {
    widened.resize(static_cast<size_t>(in_size));
    kernel_table().widen[static_cast<int>(node.spec.dtype)](widened.data(), in, nullptr, nullptr, in_size);
    src = widened.data();
  }
  for (size_t pass = 0; pass < axes.size(); ++pass) {
    const int k = axes[pass];
    AxisPass p{1, dims[static_cast<size_t>(k)], 1, at.dims[static_cast<size_t>(k)],
               at.strides.empty() ? 1 : at.strides[static_cast<size_t>(k)],
               at.padding.empty() ? 0 : at.padding[static_cast<size_t>(k)].low, node.spec.shape.dim(k)};
    for (int i = 0; i < k; ++i) p.outer *= dims[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(k) + 1; i < dims.size(); ++i) p.inner *= dims[i];
    dims[static_cast<size_t>(k)] = p.d_out;
    A* dst = nullptr;
    if (pass + 1 == axes.size() && std::is_same_v<A, T>) {
      dst = static_cast<A*>(out);
    } else {
      std::vector<A>& buf = (pass % 2 == 0) ? ping : pong;
      buf.resize(static_cast<size_t>(p.outer * p.d_out * p.inner));
      dst = buf.data();
    }
    window_pass<C>(p, src, dst);
    src = dst;
  }
  // Round (f16/bf16) or copy (no pass at all) into the output.
  const int64_t size = node.spec.size();
  if constexpr (std::is_same_v<A, T>) {
    if (static_cast<const void*>(src) != out) std::copy(src, src + size, static_cast<T*>(out));
  } else {
    kernel_table().narrow[static_cast<int>(node.spec.dtype)](out, src, nullptr, nullptr, size);
  }
}

}  // namespace

void run_window(const Node& node, std::span<const void* const> inputs, void* out) {
  if (node.op == Op::WindowScatterMax || node.op == Op::WindowScatterMin)
    return run_window_scatter(node, inputs, out);
  const void* in = inputs[0];
  const DType dtype = node.operands[0]->spec.dtype;
  visit_dtype(dtype, [&]<typename T>() {
    if (node.op == Op::WindowSum) {
      return window<WrapType<T>, SumWindow>(node, in, out);
    }
    if (node.op == Op::WindowProduct) { return window<WrapType<T>, ProductWindow>(node, in, out); }
    if constexpr (kIsComplex<T>) {
      throw TypeError(error_message(op_name(node.op), "argument tensor", "a real dtype", dtype_name(dtype)));
    } else if (node.op == Op::WindowMax) {
      return window<T, MaxWindow>(node, in, out);
    } else if (node.op == Op::WindowMin && dtype == DType::Pred) {
      if constexpr (std::is_same_v<T, uint8_t>) return window<T, PredMinWindow>(node, in, out);
    } else if (node.op == Op::WindowMin) {
      return window<T, MinWindow>(node, in, out);
    } else {
      throw InternalError(error_message(
          "run_window", "op " + std::string(op_name(node.op)) + " is not a window reduction", "", ""));
    }
  });
}

}  // namespace sluice::cpu
