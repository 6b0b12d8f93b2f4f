// Linear algebra: cholesky, triangular_solve and solve are ops of one result;
// qr, lu and eigh nodes have several, each read by a result node
// (ops/detail/results.h). Operands are converted to the dtype the op computes in
// (infer::linalg_type) before the node is made.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

using detail::make;
using detail::require;

namespace {

// A checked batch of matrices in the op's compute dtype.
Expr matrix_operand(std::string_view op, Expr a, bool square) {
  require(a, op, "a");
  a = detail::strengthen(a);
  const DType t = infer::linalg_type(op, "a", a.dtype());
  infer::matrices(op, "a", a.spec(), square);
  return detail::convert(a, t);
}

// a and b checked (b against a's side), both in the dtype they merge to.
std::pair<Expr, Expr> system_operands(std::string_view op, Expr a, Expr b, bool left_side) {
  require(a, op, "a");
  require(b, op, "b");
  a = detail::strengthen(a);
  b = detail::strengthen(b);
  const DType t = infer::linalg_type(op, "a and b", detail::merge_types({a, b}));
  infer::matrices(op, "a", a.spec(), true);
  infer::right_hand_side(op, a.spec(), b.spec(), left_side);
  return {detail::convert(a, t), detail::convert(b, t)};
}

Tuple several(Op op, const Expr& a, Attrs attrs = {}) {
  return detail::make_results(op, infer::linalg_results(op, a.spec(), attrs.linalg), {a}, std::move(attrs));
}

}  // namespace

Expr cholesky(Expr a) {
  a = matrix_operand("cholesky", a, true);
  return make(Op::Cholesky, a.spec(), {a});
}

Expr triangular_solve(Expr a, Expr b, const TriangularSolveOptions& o) {
  auto [x, y] = system_operands("triangular_solve", a, b, o.left_side);
  Attrs attrs;
  attrs.linalg.left_side = o.left_side;
  attrs.linalg.lower = o.lower;
  attrs.linalg.transform = o.transform_a;
  return make(Op::TriangularSolve, y.spec(), {x, y}, std::move(attrs));
}

Expr solve(Expr a, Expr b) {
  auto [x, y] = system_operands("solve", a, b, true);
  return make(Op::Solve, y.spec(), {x, y});
}

Qr qr(Expr a, const QrOptions& o) {
  a = matrix_operand("qr", a, false);
  Attrs attrs;
  attrs.linalg.mode = o.mode;
  const Tuple r = several(Op::Qr, a, std::move(attrs));
  return {r[0], r[1]};
}

Lu lu(Expr a) {
  a = matrix_operand("lu", a, true);
  const Tuple r = several(Op::Lu, a);
  return {r[0], r[1], r[2]};
}

namespace {

// Each eigenvector (a column of v) with its sign, or for complex its phase,
// fixed: its first component of at least half its largest magnitude becomes
// real and positive. LAPACK leaves the sign to its arithmetic (it differs
// between builds, between f32 and f64, and on a GPU's solver); this makes it
// one answer everywhere. Half the largest, not the largest: two components
// of equal magnitude (common in symmetric matrices) would let rounding pick.
// Traced, so the gradient follows it: a complex vector's phase moves with a.
Expr fix_phases(Expr v) {
  const Expr magnitude = abs(v);
  const Expr largest = reduce_max(magnitude, {.axes = {-2}, .keep_axes = true});
  const Expr first = argmax(as_type(magnitude >= largest * 0.5, DType::U8), {.axis = -2, .keep_axis = true});
  const Expr chosen = take_along_axis(v, first, -2);
  const Expr phase = chosen / abs(chosen);  // +-1, or e^(i theta)
  if (!is_complex(v.dtype())) return v * phase;
  // chosen * conj(phase) is real only up to rounding: the chosen component
  // is written as its magnitude, exactly real.
  const Expr row = iota(Spec{DType::S64, v.shape()}, v.rank() - 2);
  return select(row == first, as_type(abs(chosen), v.dtype()), v * conjugate(phase));
}

}  // namespace

Eigh eigh(Expr a) {
  a = matrix_operand("eigh", a, true);
  const Tuple r = several(Op::Eigh, a);
  // An empty matrix has no component to choose.
  if (a.spec().shape.dims().back() == 0) return {r[0], r[1]};
  return {r[0], fix_phases(r[1])};
}

}  // namespace sluice
