#pragma once
// The tensor language: what a user writes a computation in. Start here.
//
//   auto f = sluice::trace({sluice::f32({1024}), sluice::f32({})},
//       [](sluice::Expr x, sluice::Expr acc) {
//         return sluice::tuple(acc, acc + sluice::sum(x));   // {output, new acc}
//       });
//
// Names and semantics follow Nx (Nx.Backend callbacks). Binary ops broadcast
// from the right (a dim must match or be 1) and promote types by Nx's table;
// plain C++ numbers are weak scalars that take the tensor's type. Every
// builder checks its arguments and throws ShapeError or TypeError naming the
// op, the argument, what it expected and what it found: no invalid graph is
// ever built. Builders are pure functions of their arguments; tracing one
// function is single-threaded. grad and value_and_grad: ops/autodiff.h
// (included here); model helpers (softmax, cross-entropies, ...): ops/nn.h.
//
// Bits across runs, threads and machines. On the host a compiled function
// gives the same bits for the same inputs on every run and for any thread
// count. Its vector kernels come from one of three tables chosen when the
// process starts (sse4, avx2, avx512: the widest the CPU has, capped by
// SLUICE_ISA). Integer ops, comparisons, conversions and the correctly
// rounded operations of real floats (+ - * / sqrt, and the exact ones: abs,
// floor, min, select, ...) give the same bits on every table. The vector
// math (exp, log, sin, erf_inv, ..., and complex arithmetic) may differ in
// its last bits from one table to another: per op within 4 ulps for real
// floats and 8 ulps of the larger part for complex
// (tests/devices/elementwise_test.cpp), compounding as rounding does through
// what is built on it (a loop's carry, a normal random draw). dot, fft and
// conv are oneDNN's (f32 dot, conv), OpenBLAS's (other dot) and FFTW's,
// whose kernels follow the CPU. A
// GPU's results differ from the host's within each op's accuracy.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/ops/autodiff.h>
#include <sluice/ops/block.h>
#include <sluice/ops/expr.h>
#include <sluice/ops/function.h>
#include <sluice/ops/literal.h>
#include <sluice/ops/loops.h>
#include <sluice/ops/shape.h>

namespace sluice {

using Axes = std::vector<int64_t>;

// ---- creation
Expr constant(const Literal& value);
Expr constant(double value, DType dtype);                // a strong scalar
Expr weak_scalar(double value);                          // what `x + 1.5` makes
Expr weak_scalar(int64_t value);                         // what `x + 1` makes
// A plain C++ number where an op takes an Expr: `max(x, 0.0)`, `x / n`.
template <typename N>
concept Number = std::is_arithmetic_v<N> && !std::is_same_v<N, bool>;
template <Number N>
Expr weak_scalar_of(N value) {
  if constexpr (std::is_floating_point_v<N>)
    return weak_scalar(static_cast<double>(value));
  else
    return weak_scalar(static_cast<int64_t>(value));
}
template <typename T>
Expr constant(const std::vector<T>& values, Shape shape) { return constant(Literal::of(values, std::move(shape))); }
// iota(f32({2,3})): counts through all elements; with axis: along that axis.
Expr iota(const Spec& spec, std::optional<int64_t> axis = std::nullopt);
// Identity on the last two axes, broadcast over the rest.
Expr eye(const Spec& spec);

// ---- unary and binary elementwise: one builder per Unary and Binary op of
// op_list.def, named as the op (negate, exp, add, atan2, less, ...).
// Unary: float functions compute integers in f32 (Nx.Type.to_floating);
// is_nan/is_infinity return pred; abs/real/imag of complex return the real
// type; conjugate of a real returns complex. Binary: divide and atan2
// compute in floats; quotient, bitwise ops and shifts take integers only;
// comparisons and logical ops return pred.
//
// Decided where numpy, C99 and Nx leave a choice (tests/devices/numpy_findings_test.cpp):
// - Arithmetic on pred computes in u8, as Nx, whose booleans are u8:
//   pred + pred is u8 (true + true = 2), negate(true) is u8 255, and a weak
//   scalar with a pred tensor takes u8, pred's arithmetic type (true + 1 is
//   u8 2). Logical ops, comparisons, bitwise ops and select keep pred (0 or
//   1 in, 0 or 1 out): bitwise_not of pred is the logical not.
// - min and max of equal operands return the second, as numpy's minimum and
//   maximum: min(-0.0, 0.0) is 0.0 and min(0.0, -0.0) is -0.0. A NaN operand
//   wins. (So neither is commutative in the catalogue: CSE keeps the order.)
// - Complex division by a zero (of either sign on either part) gives a / |0|
//   part by part, as numpy 1.x: (1+0i) / 0 = inf + NaN i, (1+1i) / 0 =
//   inf + inf i, (0+1i) / 0 = NaN + inf i, 0 / 0 = NaN + NaN i; a part of a
//   that is 0 makes a NaN part (C99's Annex G agrees).
// - A complex function of a real argument keeps its imaginary part 0 where
//   the real part overflows: expm1(1000+0i) and exp(1000+0i) are inf + 0i, as
//   C99's cexp(+inf+0i), not inf * 0 = NaN (numpy's expm1 gives inf + NaN i).
#define SLUICE_UNARY_OP(e, name, rule, props, grad) Expr name(Expr x);
// A binary op also takes a plain number on either side: max(x, 0.0), pow(2, x).
#define SLUICE_BINARY_OP(e, name, rule, props, grad)                          \
  Expr name(Expr a, Expr b);                                                  \
  template <Number N>                                                         \
  Expr name(Expr a, N b) { return name(a, weak_scalar_of(b)); }               \
  template <Number N>                                                         \
  Expr name(N a, Expr b) { return name(weak_scalar_of(a), b); }
#include <sluice/ops/op_list.def>

// ---- selection and conversion
// Elements of on_true where pred is nonzero, else of on_false; all three broadcast.
Expr select(Expr pred, Expr on_true, Expr on_false);
template <Number N>
Expr select(Expr pred, Expr on_true, N on_false) { return select(pred, on_true, weak_scalar_of(on_false)); }
template <Number N>
Expr select(Expr pred, N on_true, Expr on_false) { return select(pred, weak_scalar_of(on_true), on_false); }
Expr clip(Expr x, Expr min, Expr max);
template <Number L, Number H>
Expr clip(Expr x, L min, H max) { return clip(x, weak_scalar_of(min), weak_scalar_of(max)); }
// Numeric conversion: floats to integers truncate toward zero and saturate,
// NaN becomes 0 (as Nx); complex to real keeps the real part.
Expr as_type(Expr x, DType dtype);
// Reinterprets the bits; dtypes of the same width only.
Expr bitcast(Expr x, DType dtype);

// ---- shape
Expr reshape(Expr x, Shape shape);
// Removes size-1 axes: all of them, or the ones named.
Expr squeeze(Expr x, const Axes& axes = {});
// To `shape`; axes[i] is the output axis of x's axis i (default: right-aligned).
Expr broadcast(Expr x, Shape shape, const Axes& axes = {});
// Permutes axes (default: reversed).
Expr transpose(Expr x, const Axes& axes = {});
// value is a scalar of x's dtype; one PadDim per axis.
Expr pad(Expr x, Expr value, const std::vector<PadDim>& config);
Expr reverse(Expr x, const Axes& axes = {});
// Static starts; lengths per axis; strides default 1.
Expr slice(Expr x, const std::vector<int64_t>& starts, const std::vector<int64_t>& lengths,
           const std::vector<int64_t>& strides = {});
// Dynamic starts: one integer scalar Expr per axis, clamped so the slice fits (as Nx).
Expr slice(Expr x, const std::vector<Expr>& starts, const std::vector<int64_t>& lengths,
           const std::vector<int64_t>& strides = {});
// Writes `update` into x at starts (clamped so it fits); static or dynamic starts.
Expr put_slice(Expr x, const std::vector<int64_t>& starts, Expr update);
Expr put_slice(Expr x, const std::vector<Expr>& starts, Expr update);
// Braced static starts: slice(x, {2}, {3}) would otherwise be ambiguous
// between the two overloads above (std::vector<Expr> has a size constructor).
inline Expr slice(Expr x, std::initializer_list<int64_t> starts, const std::vector<int64_t>& lengths,
                  const std::vector<int64_t>& strides = {}) {
  return slice(x, std::vector<int64_t>(starts), lengths, strides);
}
inline Expr put_slice(Expr x, std::initializer_list<int64_t> starts, Expr update) {
  return put_slice(x, std::vector<int64_t>(starts), update);
}
Expr concatenate(const std::vector<Expr>& xs, int64_t axis = 0);
Expr stack(const std::vector<Expr>& xs, int64_t axis = 0);

// ---- reductions. Sums and products of integers accumulate in 64 bits
// (s64/u64, as Nx); argmax/argmin return s64; all/any return pred.
struct ReduceOptions {
  Axes axes{};              // empty: all axes
  bool keep_axes = false;
};
Expr sum(Expr x, const ReduceOptions& o = {});
Expr product(Expr x, const ReduceOptions& o = {});
Expr reduce_max(Expr x, const ReduceOptions& o = {});
Expr reduce_min(Expr x, const ReduceOptions& o = {});
Expr all(Expr x, const ReduceOptions& o = {});
Expr any(Expr x, const ReduceOptions& o = {});
// NaN is the extreme of both argmax and argmin (as numpy and Nx), and NaNs
// tie with each other: tie_break Low gives the first NaN (numpy's answer),
// High the last.
struct ArgOptions {
  std::optional<int64_t> axis;  // none: index into the flattened tensor
  bool keep_axis = false;
  TieBreak tie_break = TieBreak::Low;  // equal extremes: the first (Low) or the last (High)
};
Expr argmax(Expr x, const ArgOptions& o = {});
Expr argmin(Expr x, const ArgOptions& o = {});
// A reduction with a combining function of one's own (Nx's reduce):
// fn(acc, element) takes two scalars of x's dtype and returns one, made of
// elementwise ops (a TypeError names anything else it does with them). Each
// output starts from init (a scalar, converted to x's dtype) and every
// element of its reduced axes is combined into it. The order and grouping
// of fn's calls are unspecified (as XLA's reduce: partial results are
// combined by fn too), so fn must be associative and commutative.
// fn = add, multiply, max or min of its two arguments (either way round) is
// the built-in sum, product, reduce_max or reduce_min, then combined with
// init unless init is a constant of fn's identity: the same results (integer
// sums and products wrap in x's dtype) and gradients. Any other fn runs as
// written, folding pairwise: fn over one half of the reduced elements and
// the other, then over what is left, each round one vectorized region over
// whole rows; its gradient is that computation's.
//   reduce(x, 0.0, [](Expr a, Expr e) { return sqrt(a * a + e * e); }, {.axes = {1}})  f32[4][9] -> f32[4]
using ReduceFn = std::function<Expr(Expr acc, Expr element)>;
Expr reduce(Expr x, Expr init, const ReduceFn& fn, const ReduceOptions& o = {});
template <Number N>
Expr reduce(Expr x, N init, const ReduceFn& fn, const ReduceOptions& o = {}) {
  return reduce(x, weak_scalar_of(init), fn, o);
}

// ---- dot (Nx dot/6): result axes are batch, then a's free, then b's free.
Expr dot(Expr a, const Axes& contract_a, const Axes& batch_a, Expr b, const Axes& contract_b,
         const Axes& batch_b);
// Matrix/vector product on the last axis of a and the first (or second to last) of b.
Expr dot(Expr a, Expr b);

// ---- windows and scans
struct WindowOptions {
  std::vector<int64_t> strides;  // default 1 per axis
  std::vector<PadDim> padding{};   // low/high per axis; default none (Nx :valid)
};
Expr window_sum(Expr x, const std::vector<int64_t>& window, const WindowOptions& o = {});
Expr window_max(Expr x, const std::vector<int64_t>& window, const WindowOptions& o = {});
Expr window_min(Expr x, const std::vector<int64_t>& window, const WindowOptions& o = {});
// Padding holds 1, contributing nothing; pred computes in u8.
Expr window_product(Expr x, const std::vector<int64_t>& window, const WindowOptions& o = {});
// Nx's window_reduce: reduce's fn over each window of x, whose windows are
// window_sum's, with window_dilations spacing a window's elements (default 1
// per axis). Each window starts from init and padding holds init (as XLA's
// reduce_window); fn combines a window's elements in row-major order. fn =
// add, multiply, max or min with its identity as init and no dilation is the
// built-in window op; any other fn is applied once per offset of the window,
// to the strided slice of x that offset reads for every window at once.
//   window_reduce(x, 0.0, [](Expr a, Expr e) { return max(a, abs(e)); }, {3}, {.strides = {2}})  f32[9] ->
//   f32[4]
struct WindowReduceOptions {
  std::vector<int64_t> strides{};           // default 1 per axis
  std::vector<PadDim> padding{};            // low/high per axis, holding init; default none
  std::vector<int64_t> window_dilations{};  // default 1 per axis
};
Expr window_reduce(Expr x, Expr init, const ReduceFn& fn, const std::vector<int64_t>& window,
                   const WindowReduceOptions& o = {});
template <Number N>
Expr window_reduce(Expr x, N init, const ReduceFn& fn, const std::vector<int64_t>& window,
                   const WindowReduceOptions& o = {}) {
  return window_reduce(x, weak_scalar_of(init), fn, window, o);
}
// Nx's window_scatter_max/min (XLA's select_and_scatter, what the gradient
// of window_max needs): the result has x's shape and starts as init (a
// scalar); each window of x (shaped by window and o, as window_max's) picks
// its first largest (smallest) element in row-major order, a NaN counting
// as the largest (smallest) as window_max's NaN wins, never one of the
// padding; the element of `source` for that window (source has
// window_max(x, window, o)'s shape) is added there, so overlapping windows
// that pick the same element sum. x is real; the result has the type source
// and init meet in (pred: u8).
Expr window_scatter_max(Expr x, Expr source, Expr init, const std::vector<int64_t>& window,
                        const WindowOptions& o = {});
Expr window_scatter_min(Expr x, Expr source, Expr init, const std::vector<int64_t>& window,
                        const WindowOptions& o = {});
template <Number N>
Expr window_scatter_max(Expr x, Expr source, N init, const std::vector<int64_t>& window,
                        const WindowOptions& o = {}) {
  return window_scatter_max(x, source, weak_scalar_of(init), window, o);
}
template <Number N>
Expr window_scatter_min(Expr x, Expr source, N init, const std::vector<int64_t>& window,
                        const WindowOptions& o = {}) {
  return window_scatter_min(x, source, weak_scalar_of(init), window, o);
}

// Running sums, products, maxima and minima along `axis`, from the end when
// reverse (Nx's cumulative_*). They keep x's type (integers wrap), but sums
// and products of pred are u8; max and min take real types and propagate
// NaN as max and min do.
struct ScanOptions {
  int64_t axis = 0;
  bool reverse = false;
};
Expr cumulative_sum(Expr x, const ScanOptions& o = {});
Expr cumulative_product(Expr x, const ScanOptions& o = {});
Expr cumulative_max(Expr x, const ScanOptions& o = {});
Expr cumulative_min(Expr x, const ScanOptions& o = {});

// ---- Fourier transforms along the last axis; `length` pads with zeros or
// truncates (default: the axis' size). Real inputs become complex (f64 ->
// c128, others c64). fft is unnormalised; ifft divides by n (as Nx, numpy).
Expr fft(Expr x, std::optional<int64_t> length = std::nullopt);
Expr ifft(Expr x, std::optional<int64_t> length = std::nullopt);

// ---- indexing (Nx's take, take_along_axis, gather, indexed_add,
// indexed_put). Indices may have any integer dtype. An index outside its
// axis is clamped into it (below 0 -> 0, above dim - 1 -> dim - 1), as XLA
// and so EXLA do: no index ever reads or writes outside x.
//
// Elements of x at `indices` along `axis`: the result's shape is x's with
// that axis replaced by indices' shape.  take f32[5][3], s32[2][4], axis 0 -> f32[2][4][3]
Expr take(Expr x, Expr indices, int64_t axis = 0);
// Picks along `axis` per position: indices has x's rank and x's dims on the
// other axes; the result has indices' shape (numpy's take_along_axis).
Expr take_along_axis(Expr x, Expr indices, int64_t axis);
// The last axis of indices (k <= rank entries) indexes x's first k axes; the
// result is indices' shape without its last axis, then x's axes from k on.
// gather f32[4][5][6], s64[3][2] -> f32[3][6]  (x[i0][i1] for each row)
Expr gather(Expr x, Expr indices);
// x with `updates` added at the places gather(x, indices) reads: updates has
// gather's result shape. Duplicate indices add up (as Nx); the result has
// the dtype x and updates promote to, but pred adds in u8 and gives u8 (as
// pred + pred: true + true = 2).
Expr indexed_add(Expr x, Expr indices, Expr updates);
// As indexed_add, writing instead of adding: where indices repeat, the last
// update (in row-major order of indices) is the one written. Nothing is
// computed, so the result has the promoted dtype as it is: pred with pred
// updates stays pred.
Expr indexed_put(Expr x, Expr indices, Expr updates);

// ---- sorting. Orders are numpy's: NaNs after every number in ascending
// order (before, in descending: descending is ascending reversed, ties kept
// in index order); -0.0 and 0.0 are equal. Complex numbers are not ordered
// (TypeError). Sorts are always stable, so `stable` changes nothing; it is
// there to spell Nx's option.
enum class SortDirection : uint8_t { Ascending, Descending };
struct SortOptions {
  int64_t axis = 0;  // Nx's default
  SortDirection direction = SortDirection::Ascending;
  bool stable = true;
  DType index_dtype = DType::S64;  // argsort and top_k's indices: any integer dtype
};
Expr sort(Expr x, const SortOptions& o = {});
// The indices that sort x along the axis: take_along_axis(x, argsort(x)) == sort(x).
Expr argsort(Expr x, const SortOptions& o = {});
// The k largest along the last axis, largest first, and their indices (s64);
// among equal values the lower index comes first.  top_k f32[4][10], 3 -> {f32[4][3], s64[4][3]}
struct TopK {
  Expr values, indices;
};
TopK top_k(Expr x, int64_t k);

// ---- convolution (Nx.conv). input [batch][in channels][spatial...] and
// kernel [out channels][in channels / feature_group_size][spatial...] give
// [batch / batch_group_size][out channels][spatial...], any number of
// spatial axes (none: a matrix product over channels). Each output element
// is a sum over the kernel window (a cross-correlation, as Nx and XLA: the
// kernel is not flipped) of the input dilated by input_dilation (zeros
// between elements), then padded. The result has the floating type of the
// operands' promotion (Nx.Type.to_floating: s32 with s32 -> f32, f64 stays
// f64, complex stays complex). Per spatial axis every factor is >= 1, and the
// dilated window fits within the padded, dilated input: a window past it is a
// ShapeError, an empty spatial axis included (XLA's arithmetic would give an
// empty output; a window that sees none of its input is a mistake more often
// than a wish). An empty batch gives an empty result.
//   conv f32[8][64][56][56], f32[64][64][3][3], {.padding = ConvPadding::Same} -> f32[8][64][56][56]
// feature_group_size g: channels split into g groups, out channel group j
// reads in channel group j (depthwise: g = in channels). batch_group_size b:
// the batch split into b groups, out channel group j reads batch group j
// (what a grouped conv's kernel gradient needs). At most one of them > 1.
enum class ConvPadding : uint8_t {
  Valid,     // none
  Same,      // k - 1 for a dilated kernel of size k, half before (rounded down), as Nx :same
  Explicit,  // padding_config: low/high per spatial axis; negative trims
};
struct ConvOptions {
  std::vector<int64_t> strides{};           // default 1 per spatial axis
  ConvPadding padding = ConvPadding::Valid;
  std::vector<PadDim> padding_config{};     // with Explicit only; interior must be 0
  std::vector<int64_t> input_dilation{};    // default 1 per spatial axis
  std::vector<int64_t> kernel_dilation{};   // default 1 per spatial axis
  int64_t feature_group_size = 1;
  int64_t batch_group_size = 1;
};
Expr conv(Expr input, Expr kernel, const ConvOptions& o = {});
// ---- linear algebra (Nx.LinAlg). Each op works on the last two axes and
// is batched over the leading ones: a is [..., n, n] (qr: [..., m, n]) and
// b's batch dims equal a's. f32, f64, c64 and c128; integer and pred
// operands compute in f32 (as Nx); f16 and bf16 are a TypeError (LAPACK has
// no half precision). Failures inside compiled code give NaNs, never an
// exception (as EXLA/JAX), so a stream of chunks keeps flowing:
// - cholesky of a matrix that is not positive definite: all NaN;
// - solve with a singular a: x all NaN;
// - triangular_solve with a zero on a's diagonal: IEEE infinities and NaNs
//   from the division, as trsm gives them;
// - lu of a singular a: still P, L, U with A = P L U (U has a zero pivot);
// - eigh that fails to converge (NaN input): all NaN.
// Gradients (JAX's rules) of every one: qr's needs m >= n (complete mode:
// square); cholesky's and eigh's assume a Hermitian perturbation of a, so
// differentiate through a symmetrised input ((x + xᴴ) / 2); lu's p, a
// piecewise constant permutation, passes none.
//
// The lower Cholesky factor L of a Hermitian positive definite a (a = L Lᴴ);
// only a's lower triangle is read.  cholesky f32[8][4][4] -> f32[8][4][4]
Expr cholesky(Expr a);
// Solves op(a) x = b (left_side) or x op(a) = b for x, a triangular: only
// its `lower` (or upper) triangle is read. b is a vector [..., n] or a
// matrix ([..., n, m] on the left side, [..., m, n] on the right); x has b's
// shape.  triangular_solve f64[3][3], f64[3][2] -> f64[3][2]
struct TriangularSolveOptions {
  bool left_side = true;                                        // op(a) x = b (false: x op(a) = b)
  bool lower = true;                                            // a is lower triangular (false: upper)
  TriangularTransform transform_a = TriangularTransform::None;  // op(a): a, aᵀ or aᴴ
};
Expr triangular_solve(Expr a, Expr b, const TriangularSolveOptions& o = {});
// x with a x = b, a square (LU with partial pivoting, LAPACK's gesv); b a
// vector [..., n] or a matrix [..., n, m].  solve f32[3][3], f32[3] -> f32[3]
Expr solve(Expr a, Expr b);
// a = q r, q with orthonormal columns, r upper triangular, as LAPACK's
// geqrf and orgqr/ungqr make them (numpy's signs: r's diagonal may be
// negative).  qr f32[5][3] -> {f32[5][3], f32[3][3]};  complete -> {f32[5][5], f32[5][3]}
struct QrOptions {
  QrMode mode = QrMode::Reduced;
};
struct Qr {
  Expr q, r;
};
Qr qr(Expr a, const QrOptions& o = {});
// a = p l u with partial pivoting (LAPACK's getrf): p a permutation matrix
// (s64, as Nx), l unit lower triangular, u upper triangular (scipy.linalg.lu's
// factors).  lu f64[4][4] -> {s64[4][4], f64[4][4], f64[4][4]}
struct Lu {
  Expr p, l, u;
};
Lu lu(Expr a);
// The eigenvalues (real, ascending) and eigenvectors (the columns of v, of
// unit norm; a v = v diag(w)) of a Hermitian a; only its lower triangle is
// read (LAPACK's syevd/heevd). Each vector's sign (complex: phase) is fixed,
// the same on every device and in every precision: its first component of at
// least half its largest magnitude is real and positive. numpy leaves the sign
// to its LAPACK's arithmetic, which differs between builds and between f32
// and f64; numpy's vectors given the same rule are sluice's. The gradient
// differentiates the vectors with their signs (phases) so fixed.
// eigh c64[2][3][3] -> {f32[2][3], c64[2][3][3]}
struct Eigh {
  Expr eigenvalues, eigenvectors;
};
Eigh eigh(Expr a);

// ---- operators
inline Expr operator-(Expr x) { return negate(x); }
inline Expr operator~(Expr x) { return bitwise_not(x); }
#define SLUICE_OPERATOR(sym, fn)                                   \
  inline Expr operator sym(Expr a, Expr b) { return fn(a, b); }  \
  template <Number N>                                            \
  Expr operator sym(Expr a, N b) { return fn(a, b); }            \
  template <Number N>                                            \
  Expr operator sym(N a, Expr b) { return fn(a, b); }
SLUICE_OPERATOR(+, add) SLUICE_OPERATOR(-, subtract) SLUICE_OPERATOR(*, multiply)
SLUICE_OPERATOR(/, divide) SLUICE_OPERATOR(%, remainder)
SLUICE_OPERATOR(&, bitwise_and) SLUICE_OPERATOR(|, bitwise_or) SLUICE_OPERATOR(^, bitwise_xor)
SLUICE_OPERATOR(<<, left_shift) SLUICE_OPERATOR(>>, right_shift)
SLUICE_OPERATOR(==, equal) SLUICE_OPERATOR(!=, not_equal) SLUICE_OPERATOR(<, less)
SLUICE_OPERATOR(<=, less_equal) SLUICE_OPERATOR(>, greater) SLUICE_OPERATOR(>=, greater_equal)
SLUICE_OPERATOR(&&, logical_and) SLUICE_OPERATOR(||, logical_or)
#undef SLUICE_OPERATOR

}  // namespace sluice
