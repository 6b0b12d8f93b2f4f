// Unary, binary and ternary elementwise ops, as_type and bitcast. Each node
// gets operands of its compute dtype and of its result shape.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

using detail::convert;
using detail::is_weak;
using detail::make;
using detail::require;
using detail::to_operand;

namespace {

// A unary op of a plain number is a tensor op (Nx: exp(1.0) is f32), so the
// weak scalar takes its default type first.
Expr unary(Op op, Expr x) {
  require(x, op_name(op), "x");
  x = detail::strengthen(x);
  const infer::ElementwiseTypes t = infer::unary(op, x.dtype());
  return make(op, {t.result, x.shape()}, {convert(x, t.compute)});
}

// floor, ceil and round of an integer are the integer itself.
Expr rounding(Op op, Expr x) {
  require(x, op_name(op), "x");
  if (!is_inexact(x.dtype())) return x;
  return unary(op, x);
}

Expr binary(Op op, Expr a, Expr b) {
  require(a, op_name(op), "a");
  require(b, op_name(op), "b");
  const Shape shape = infer::broadcast_shapes(op_name(op), {a.shape(), b.shape()});
  const infer::ElementwiseTypes t = infer::binary(op, a.dtype(), b.dtype(), detail::merge_types({a, b}));
  Attrs attrs;
  attrs.weak = is_weak(a) && is_weak(b);
  return make(op, {t.result, shape}, {to_operand(a, t.compute, shape), to_operand(b, t.compute, shape)},
              std::move(attrs));
}

// The builder of each unary op is unary_builder<op>; the ops whose builder
// does more than type and convert specialise it.
template <Op op>
Expr unary_builder(Expr x) {
  return unary(op, x);
}

template <>
Expr unary_builder<Op::Floor>(Expr x) {
  return rounding(Op::Floor, x);
}
template <>
Expr unary_builder<Op::Ceil>(Expr x) {
  return rounding(Op::Ceil, x);
}
template <>
Expr unary_builder<Op::Round>(Expr x) {
  return rounding(Op::Round, x);
}

template <>
Expr unary_builder<Op::Real>(Expr x) {
  require(x, "real", "x");
  return is_complex(x.dtype()) ? unary(Op::Real, x) : x;
}

template <>
Expr unary_builder<Op::Imag>(Expr x) {
  require(x, "imag", "x");
  if (is_complex(x.dtype())) return unary(Op::Imag, x);
  // A real number's imaginary part is zero, in the number's own type.
  return detail::broadcast_to(constant(0.0, x.dtype()), x.shape());
}

template <>
Expr unary_builder<Op::Conjugate>(Expr x) {
  require(x, "conjugate", "x");
  return unary(Op::Conjugate, convert(x, to_complex(x.dtype())));
}

}  // namespace

#define SLUICE_UNARY_OP(e, name, rule, props, grad) \
  Expr name(Expr x) { return unary_builder<Op::e>(x); }
#define SLUICE_BINARY_OP(e, name, rule, props, grad) \
  Expr name(Expr a, Expr b) { return binary(Op::e, a, b); }
#include <sluice/ops/op_list.def>

Expr select(Expr pred, Expr on_true, Expr on_false) {
  require(pred, "select", "pred");
  require(on_true, "select", "on_true");
  require(on_false, "select", "on_false");
  const Shape shape = infer::broadcast_shapes("select", {pred.shape(), on_true.shape(), on_false.shape()});
  const infer::ElementwiseTypes t = infer::ternary(Op::Select, detail::merge_types({on_true, on_false}));
  Attrs attrs;
  attrs.weak = is_weak(on_true) && is_weak(on_false);
  return make(Op::Select, {t.result, shape},
              {to_operand(pred, DType::Pred, shape), to_operand(on_true, t.compute, shape),
               to_operand(on_false, t.compute, shape)},
              std::move(attrs));
}

Expr clip(Expr x, Expr min, Expr max) {
  require(x, "clip", "x");
  require(min, "clip", "min");
  require(max, "clip", "max");
  const Shape shape = infer::broadcast_shapes("clip", {x.shape(), min.shape(), max.shape()});
  const infer::ElementwiseTypes t = infer::ternary(Op::Clip, detail::merge_types({x, min, max}));
  Attrs attrs;
  attrs.weak = is_weak(x) && is_weak(min) && is_weak(max);
  return make(
      Op::Clip, {t.result, shape},
      {to_operand(x, t.compute, shape), to_operand(min, t.compute, shape), to_operand(max, t.compute, shape)},
      std::move(attrs));
}

Expr as_type(Expr x, DType dtype) {
  require(x, "as_type", "x");
  return convert(x, dtype);
}

Expr bitcast(Expr x, DType dtype) {
  require(x, "bitcast", "x");
  x = detail::strengthen(x);
  infer::bitcast(x.dtype(), dtype);
  if (x.dtype() == dtype) return x;
  Attrs a;
  a.dtype = dtype;
  return make(Op::Bitcast, {dtype, x.shape()}, {x}, std::move(a));
}

}  // namespace sluice
