// Reductions: sum, product, reduce_max, reduce_min, all, any, argmax, argmin.
// The operand is converted to the dtype the reduction reads
// (infer::reduce_type), so a kernel reads and writes one dtype.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

using detail::make;
using detail::require;

namespace {

Expr reduce(Op op, Expr x, const ReduceOptions& o) {
  require(x, op_name(op), "x");
  x = detail::strengthen(x);
  Attrs a;
  a.axes = infer::normalize_axes(op_name(op), "axes", x.rank(), o.axes, true);
  a.keep_axes = o.keep_axes;
  const DType t = infer::reduce_type(op, x.dtype());
  Shape shape = infer::reduce(x.shape(), a.axes, o.keep_axes);
  return make(op, {t, std::move(shape)}, {detail::convert(x, t)}, std::move(a));
}

Expr arg_reduce(Op op, Expr x, const ArgOptions& o) {
  require(x, op_name(op), "x");
  x = detail::strengthen(x);
  infer::reduce_type(op, x.dtype());
  Attrs a;
  a.axis = o.axis ? infer::normalize_axis(op_name(op), "axis", x.rank(), *o.axis) : -1;
  a.keep_axes = o.keep_axis;
  a.tie_break = o.tie_break;
  Shape shape = infer::arg_reduce(op_name(op), x.shape(), a.axis, o.keep_axis);
  return make(op, {DType::S64, std::move(shape)}, {x}, std::move(a));
}

}  // namespace

Expr sum(Expr x, const ReduceOptions& o) { return reduce(Op::Sum, x, o); }
Expr product(Expr x, const ReduceOptions& o) { return reduce(Op::Product, x, o); }
Expr reduce_max(Expr x, const ReduceOptions& o) { return reduce(Op::ReduceMax, x, o); }
Expr reduce_min(Expr x, const ReduceOptions& o) { return reduce(Op::ReduceMin, x, o); }
Expr all(Expr x, const ReduceOptions& o) { return reduce(Op::All, x, o); }
Expr any(Expr x, const ReduceOptions& o) { return reduce(Op::Any, x, o); }
Expr argmax(Expr x, const ArgOptions& o) { return arg_reduce(Op::Argmax, x, o); }
Expr argmin(Expr x, const ArgOptions& o) { return arg_reduce(Op::Argmin, x, o); }

}  // namespace sluice
