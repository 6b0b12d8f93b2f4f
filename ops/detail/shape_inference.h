#pragma once
// Shape and type inference: what each op makes of its arguments' specs, as
// pure functions (XLA's shape_inference.h). The builders of ops.h call these
// to validate and to compute result specs; passes and backends may call them
// to re-derive a node's spec. One function per op family, each with a worked
// example. Every function throws ShapeError or TypeError naming the op, the
// argument, what was expected and what was found.
//
// Axes passed in may be negative (counted from the end, as Nx); functions
// named normalize_* return them non-negative.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/ops/expr.h>
#include <sluice/ops/op.h>
#include <sluice/ops/shape.h>

namespace sluice::infer {

// ---- messages

// "[1, 2]"
std::string str(const std::vector<int64_t>& v);

// Appends pieces (strings, numbers, DTypes, Shapes, Specs, int lists) into
// one message; avoids operator+ chains, which also trip a GCC 12 -Wrestrict
// false positive.
void append(std::string& s, std::string_view v);
void append(std::string& s, DType v);
void append(std::string& s, const Spec& v);
void append(std::string& s, const std::vector<int64_t>& v);
void append(std::string& s, long long v);
void append(std::string& s, unsigned long long v);
template <typename T>
requires std::is_integral_v<T>
void append(std::string& s, T v) {
  if constexpr (std::is_signed_v<T>)
    append(s, static_cast<long long>(v));
  else
    append(s, static_cast<unsigned long long>(v));
}
template <typename... Ts>
std::string cat(const Ts&... parts) {
  std::string s;
  (append(s, parts), ...);
  return s;
}

// "<op>: argument <arg>: expected <expected>, found <found>" (error_message)
[[noreturn]] void shape_error(std::string_view op, std::string_view arg, std::string_view expected,
                              std::string_view found);
[[noreturn]] void type_error(std::string_view op, std::string_view arg, std::string_view expected,
                             std::string_view found);

// A result shape, checked against kMaxRank with the op's name.
// dot f32[2][3][4][5][6][7][8][9] x f32[...9 axes] with no contraction -> ShapeError
Shape result_shape(std::string_view op, std::vector<int64_t> dims);

// One axis, -rank <= axis < rank, made non-negative.
// normalize_axis("sum", "axes", f32[2][3], -1) -> 1
int64_t normalize_axis(std::string_view op, std::string_view arg, int rank, int64_t axis);
// Sorted, unique, non-negative; `empty_means_all`: {} -> every axis.
// normalize_axes("sum", "axes", 3, {-1, 0}) -> {0, 2}; {0, 0} -> ShapeError
std::vector<int64_t> normalize_axes(std::string_view op, std::string_view arg, int rank,
                                    const std::vector<int64_t>& axes, bool empty_means_all);

// ---- elementwise (infer_elementwise.cpp)

// Broadcast aligned from the right; each dim must match or be 1.
// add f32[2][1] f32[3] -> [2][3];  add f32[2] f32[3] -> ShapeError
Shape broadcast_shapes(std::string_view op, const std::vector<Shape>& shapes);

// The dtype operands are converted to (compute) and the dtype of the result.
struct ElementwiseTypes {
  DType compute;
  DType result;
};
// exp s32 -> {f32, f32};  abs c64 -> {c64, f32};  is_nan f16 -> {f16, pred};
// negate pred -> {u8, u8};  bitwise_not pred -> {pred, pred};  erf c64 -> TypeError
ElementwiseTypes unary(Op op, DType x);
// `merged` is the operands' common dtype (promote, weak scalars resolved).
// divide s32 s32 (s32) -> {f32, f32};  less s8 u8 (s16) -> {s16, pred};
// add pred pred (pred) -> {u8, u8};  bitwise_and f32 s32 (f32) -> TypeError
ElementwiseTypes binary(Op op, DType a, DType b, DType merged);
// select / clip: `merged` is the values' common dtype.
// select pred s32 f32 (f32) -> {f32, f32};  clip c64 c64 c64 -> TypeError
ElementwiseTypes ternary(Op op, DType merged);
// A weak scalar's type meets a strong one: s8 with weak s64 -> s8; pred with
// weak s64 -> u8; s32 with weak f64 -> f32; f16 with weak f64 -> f16.
DType merge_weak(DType strong, DType weak);

// ---- conversions (infer_elementwise.cpp)

// bitcast f32 -> s32 ok;  f32 -> f64 -> TypeError (widths differ)
void bitcast(DType from, DType to);

// ---- shape (infer_shape.cpp)

// reshape f32[2][3] -> [3][2] ok;  -> [4] ShapeError (6 elements vs 4)
void reshape(const Shape& x, const Shape& to);
// The axes squeeze removes, sorted: f32[1][3][1] {} -> {0, 2};  {1} -> ShapeError
std::vector<int64_t> squeeze_axes(const Shape& x, const std::vector<int64_t>& axes);
// Output axis of each of x's axes, validated; {} means right-aligned.
// broadcast f32[3] to [2][3] {} -> {1};  f32[3] to [3][2] {0} -> {0};  f32[2] to [2][3] {} -> ShapeError
std::vector<int64_t> broadcast_axes(const Shape& x, const Shape& to, const std::vector<int64_t>& axes);
// A permutation of x's axes; {} means reversed.
// transpose f32[2][3][4] {} -> {2, 1, 0} -> [4][3][2];  {0, 0, 1} -> ShapeError
std::vector<int64_t> transpose_permutation(const Shape& x, const std::vector<int64_t>& axes);
Shape transpose(const Shape& x, const std::vector<int64_t>& permutation);
// pad f32[3] {1:2:1} -> f32[8] (1 + 3 + 2 interior + 2);  interior -1 -> ShapeError
Shape pad(const Shape& x, const std::vector<PadDim>& config);
// Strides filled in (default 1 per axis) and checked.
std::vector<int64_t> slice_strides(const Shape& x, const std::vector<int64_t>& lengths,
                                   const std::vector<int64_t>& strides);
// Each result dim is ceil(length / stride) (as Nx: lengths are taken from x,
// strides step inside them).
// slice f32[32][32] [0:16, 0:16] -> [16][16];  f32[10] start 2 length 7 stride 2 -> [4];
// f32[4] start 3 length 2 -> ShapeError (a static slice must lie inside x)
Shape slice(const Shape& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& lengths,
            const std::vector<int64_t>& strides);
// Starts known only at run time; kernels clamp each to [0, dim - length].
// slice f32[10] length 4 -> [4];  f32[10] length 11 -> ShapeError
Shape dynamic_slice(const Shape& x, const std::vector<int64_t>& lengths, const std::vector<int64_t>& strides);
// Checks update against x; returns `starts` clamped so the update fits (as Nx).
// put_slice f32[5] at {4} with f32[2] -> starts {3};  f32[5] with f32[6] -> ShapeError
std::vector<int64_t> put_slice(const Shape& x, const Shape& update, const std::vector<int64_t>& starts);
// Starts known only at run time; kernels clamp them as above.
void dynamic_put_slice(const Shape& x, const Shape& update);
// axis may be negative.
// concatenate f32[2][3] f32[4][3] axis 0 -> [6][3];  f32[2][3] f32[2][4] axis 0 -> ShapeError
Shape concatenate(const std::vector<Shape>& xs, int64_t axis);

// ---- reductions (infer_reduce.cpp)

// The dtype a reduction reads, which its result has too (argmax/argmin
// return s64 whatever they read): sum/product s8..s64 -> s64, pred and
// u8..u64 -> u64, inexact kept; reduce_max/min, argmax/argmin keep real
// types (complex -> TypeError); all/any read pred.
// sum s32 -> s64;  all f32 -> pred;  reduce_max c64 -> TypeError
DType reduce_type(Op op, DType x);
// sum f32[2][3][4] axes {0, 2} -> [3];  keep_axes -> [1][3][1]
Shape reduce(const Shape& x, const std::vector<int64_t>& axes, bool keep_axes);
// argmax f32[2][3] axis 1 -> s64[2];  no axis -> s64[];  f32[2][0] axis 1 -> ShapeError
Shape arg_reduce(std::string_view op, const Shape& x, int64_t axis, bool keep_axis);

// ---- dot (infer_dot.cpp)

// Validates the axes (non-negative already) and returns the result shape:
// batch axes, then a's free axes, then b's free axes.
// dot f32[8][2][3] contract {2} batch {0}, f32[8][3][4] contract {1} batch {0} -> [8][2][4]
// dot f32[2][3] {1}, f32[4][5] {0} -> ShapeError (3 vs 4)
Shape dot(const Shape& a, const std::vector<int64_t>& contract_a, const std::vector<int64_t>& batch_a,
          const Shape& b, const std::vector<int64_t>& contract_b, const std::vector<int64_t>& batch_b);

// dot computes in the merged dtype, pred in u8: dot pred pred -> u8
DType dot_type(DType merged);

// ---- windows and scans (infer_window.cpp)

// Sums and products (window_*, cumulative_*) compute pred in u8; max and
// min keep real types (complex -> TypeError).
// window_sum pred -> u8;  cumulative_product s8 -> s8;  window_max f16 -> f16;
// cumulative_min c64 -> TypeError
DType window_type(Op op, DType x);

// Fills in default strides (1) and padding (0) and checks them.
void window_options(std::string_view op, const Shape& x, const std::vector<int64_t>& window,
                    std::vector<int64_t>& strides, std::vector<PadDim>& padding);
// Each axis: floor((d + low + high - w) / s) + 1.
// window_sum f32[10] window {3} stride {2} -> [4];  f32[8][8] window {2, 2} pad {1:1, 0:0} -> [9][7];
// f32[2] window {3} -> ShapeError
Shape window(std::string_view op, const Shape& x, const std::vector<int64_t>& window,
             const std::vector<int64_t>& strides, const std::vector<PadDim>& padding);

// ---- Fourier transforms (infer_fft.cpp)

// The complex type a transform computes in: f64, c128 -> c128; others c64.
// fft s32[8] -> c64[8];  fft f64[4][16] -> c128[4][16];  fft f32[] -> ShapeError
DType fft_type(std::string_view op, const Spec& x, int64_t length);

// ---- indexing (infer_index.cpp)

// Indices are integers (pred and floats -> TypeError) of rank >= 1 whose
// last dim k is 1..rank(x). The result: indices' dims but the last, then
// x's dims from k on. An empty indexed axis with rows to read -> ShapeError.
// gather f32[4][5][6], s64[3][2] -> [3][6];  f32[4], s32[2][2] -> ShapeError
Shape gather(std::string_view op, const Spec& x, const Spec& indices);
// updates must have gather's result shape.
// indexed_add f32[4][5], s64[3][1], f32[3][5] ok;  f32[3][4] -> ShapeError
void scatter(std::string_view op, const Spec& x, const Spec& indices, const Spec& updates);

// ---- sorting (infer_index.cpp)

// sort and argsort order real types and pred: c64 -> TypeError; f32[] -> ShapeError.
// argsort's index dtype is an integer type that holds the axis' last index.
void sort(std::string_view op, const Spec& x, int64_t axis);
void sort_index_type(std::string_view op, DType index, int64_t length);

// ---- convolution (infer_conv.cpp)

// input and kernel of one rank >= 2: [batch][channels][spatial...] and
// [out channels][in channels / groups][spatial...]. conv f32[2][3], f32[4][3][1] -> ShapeError
void conv_operands(std::string_view op, const Shape& input, const Shape& kernel);
// A per-spatial-axis factor (strides, dilations): empty -> 1 per axis; each >= 1.
// conv_factors("conv", "strides", {}, 2) -> {1, 1};  {0, 1} -> ShapeError
std::vector<int64_t> conv_factors(std::string_view op, std::string_view arg, std::vector<int64_t> v,
                                  size_t spatial);
// Explicit padding: one {low, high} per spatial axis, interior 0.
void conv_padding(std::string_view op, const std::vector<PadDim>& padding, size_t spatial);
// Nx's :same: k - 1 for each dilated kernel size k, the smaller half before.
// kernel [8][3][3][4], dilation {1, 2} -> {1:1, 3:3}
std::vector<PadDim> conv_same_padding(const Shape& kernel, const std::vector<int64_t>& kernel_dilation);
// Group sizes: both >= 1, not both > 1, batch % batch_groups, out channels %
// each, in channels == kernel's in channels * feature_groups.
// input [2][6][5], kernel [4][3][2], feature_groups 2 ok;  feature_groups 3 -> ShapeError
void conv_groups(std::string_view op, const Shape& input, const Shape& kernel, int64_t feature_groups,
                 int64_t batch_groups);
// The result shape from validated attrs (Attrs' conv fields): the padded,
// dilated input must hold the dilated kernel on every spatial axis.
// [8][64][56][56], [64][64][3][3], pad 1:1 -> [8][64][56][56];  [1][1][2], [1][1][3] -> ShapeError
Shape conv(std::string_view op, const Shape& input, const Shape& kernel, const Attrs& a);
// ---- linear algebra (infer_linalg.cpp)

// The dtype a linear algebra op computes in and returns (for two operands,
// the one they merge to): f32, f64, c64 and c128 stay; integers and pred
// compute in f32 (Nx.Type.to_floating); f16 and bf16 -> TypeError (LAPACK
// has no half precision: convert to f32 first).
// cholesky s32 -> f32;  qr c128 -> c128;  eigh f16 -> TypeError
DType linalg_type(std::string_view op, std::string_view arg, DType x);
// A batch of matrices [..., m, n] (rank >= 2); `square`: m == n.
// cholesky f32[4][3][3] ok;  f32[3][4] -> ShapeError;  qr f32[3] -> ShapeError
void matrices(std::string_view op, std::string_view arg, const Spec& a, bool square);
// b against a batch of square matrices a [..., n, n]: a vector [..., n]
// (rank one less than a's) or a matrix, [..., n, m] when a is on the left
// of x (op(a) x = b), [..., m, n] when on the right (x op(a) = b); b's
// batch dims are a's (no broadcasting, as Nx).
// solve f32[2][3][3], f32[2][3] ok;  f32[2][3][3], f32[2][3][5] ok;
// f32[2][3][3], f32[2][4][5] -> ShapeError;  f32[2][3][3], f32[3][3][5] -> ShapeError
void right_hand_side(std::string_view op, const Spec& a, const Spec& b, bool left_side);
// The results of an op with several results, for `a` already of its
// compute dtype: qr's q and r, lu's p (s64), l and u, eigh's eigenvalues
// (real, ascending) and eigenvectors (columns).
// qr f32[5][3] reduced -> {f32[5][3], f32[3][3]};  complete -> {f32[5][5], f32[5][3]}
// lu f64[2][4][4] -> {s64[2][4][4], f64[2][4][4], f64[2][4][4]};  eigh c64[3][3] -> {f32[3], c64[3][3]}
std::vector<Spec> linalg_results(Op op, const Spec& a, const LinAlgAttrs& attrs);

// ---- loops (infer_loop.cpp)

// The steps of a scan: the leading dim its xs share, or `length` without xs.
// scan xs f32[8][3], s64[8] -> 8;  no xs, length 5 -> 5;
// xs f32[8][3], s64[7] -> ShapeError;  xs f32[8], length 5 -> ShapeError
int64_t scan_length(std::string_view op, const std::vector<Spec>& xs, std::optional<int64_t> length);
// The carry a body returns against the carry it was given, entry by entry
// (`fn` names the body): while_loop body returning (f32[4], s64[]) for a
// carry of (f32[4], s32[]) -> TypeError naming body's new carry 1.
void loop_carry(std::string_view op, std::string_view fn, const std::vector<Spec>& carry,
                const std::vector<Spec>& returned);
// A while_loop's cond returns one pred scalar: s64[] -> TypeError; pred[2] -> ShapeError.
void loop_predicate(std::string_view op, const std::vector<Spec>& returned);

}  // namespace sluice::infer
