// Unary, binary and ternary elementwise ops, as_type and bitcast. Each node
// gets operands of its compute dtype and of its result shape.
#include "ops/builders_common.h"
#include "ops/ops.h"
#include "ops/shape_inference.h"

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

}  // namespace

#define SLUICE_UNARY_BUILDER(fn, op) \
  Expr fn(Expr x) { return unary(Op::op, x); }
SLUICE_UNARY_BUILDER(negate, Negate)
SLUICE_UNARY_BUILDER(abs, Abs)
SLUICE_UNARY_BUILDER(sign, Sign)
SLUICE_UNARY_BUILDER(exp, Exp)
SLUICE_UNARY_BUILDER(expm1, Expm1)
SLUICE_UNARY_BUILDER(log, Log)
SLUICE_UNARY_BUILDER(log1p, Log1p)
SLUICE_UNARY_BUILDER(sqrt, Sqrt)
SLUICE_UNARY_BUILDER(rsqrt, Rsqrt)
SLUICE_UNARY_BUILDER(cbrt, Cbrt)
SLUICE_UNARY_BUILDER(sin, Sin)
SLUICE_UNARY_BUILDER(cos, Cos)
SLUICE_UNARY_BUILDER(tan, Tan)
SLUICE_UNARY_BUILDER(asin, Asin)
SLUICE_UNARY_BUILDER(acos, Acos)
SLUICE_UNARY_BUILDER(atan, Atan)
SLUICE_UNARY_BUILDER(sinh, Sinh)
SLUICE_UNARY_BUILDER(cosh, Cosh)
SLUICE_UNARY_BUILDER(tanh, Tanh)
SLUICE_UNARY_BUILDER(asinh, Asinh)
SLUICE_UNARY_BUILDER(acosh, Acosh)
SLUICE_UNARY_BUILDER(atanh, Atanh)
SLUICE_UNARY_BUILDER(sigmoid, Sigmoid)
SLUICE_UNARY_BUILDER(erf, Erf)
SLUICE_UNARY_BUILDER(erfc, Erfc)
SLUICE_UNARY_BUILDER(erf_inv, ErfInv)
SLUICE_UNARY_BUILDER(is_nan, IsNan)
SLUICE_UNARY_BUILDER(is_infinity, IsInfinity)
SLUICE_UNARY_BUILDER(bitwise_not, BitwiseNot)
SLUICE_UNARY_BUILDER(count_leading_zeros, CountLeadingZeros)
SLUICE_UNARY_BUILDER(population_count, PopulationCount)
#undef SLUICE_UNARY_BUILDER

Expr floor(Expr x) { return rounding(Op::Floor, x); }
Expr ceil(Expr x) { return rounding(Op::Ceil, x); }
Expr round(Expr x) { return rounding(Op::Round, x); }

Expr real(Expr x) {
  require(x, "real", "x");
  return is_complex(x.dtype()) ? unary(Op::Real, x) : x;
}

Expr imag(Expr x) {
  require(x, "imag", "x");
  if (is_complex(x.dtype())) return unary(Op::Imag, x);
  // A real number's imaginary part is zero, in the number's own type.
  return detail::broadcast_to(constant(0.0, x.dtype()), x.shape());
}

Expr conjugate(Expr x) {
  require(x, "conjugate", "x");
  return unary(Op::Conjugate, convert(x, to_complex(x.dtype())));
}

#define SLUICE_BINARY_BUILDER(fn, op) \
  Expr fn(Expr a, Expr b) { return binary(Op::op, a, b); }
SLUICE_BINARY_BUILDER(add, Add)
SLUICE_BINARY_BUILDER(subtract, Subtract)
SLUICE_BINARY_BUILDER(multiply, Multiply)
SLUICE_BINARY_BUILDER(divide, Divide)
SLUICE_BINARY_BUILDER(pow, Pow)
SLUICE_BINARY_BUILDER(remainder, Remainder)
SLUICE_BINARY_BUILDER(quotient, Quotient)
SLUICE_BINARY_BUILDER(atan2, Atan2)
SLUICE_BINARY_BUILDER(min, Min)
SLUICE_BINARY_BUILDER(max, Max)
SLUICE_BINARY_BUILDER(bitwise_and, BitwiseAnd)
SLUICE_BINARY_BUILDER(bitwise_or, BitwiseOr)
SLUICE_BINARY_BUILDER(bitwise_xor, BitwiseXor)
SLUICE_BINARY_BUILDER(left_shift, LeftShift)
SLUICE_BINARY_BUILDER(right_shift, RightShift)
SLUICE_BINARY_BUILDER(equal, Equal)
SLUICE_BINARY_BUILDER(not_equal, NotEqual)
SLUICE_BINARY_BUILDER(less, Less)
SLUICE_BINARY_BUILDER(less_equal, LessEqual)
SLUICE_BINARY_BUILDER(greater, Greater)
SLUICE_BINARY_BUILDER(greater_equal, GreaterEqual)
SLUICE_BINARY_BUILDER(logical_and, LogicalAnd)
SLUICE_BINARY_BUILDER(logical_or, LogicalOr)
SLUICE_BINARY_BUILDER(logical_xor, LogicalXor)
#undef SLUICE_BINARY_BUILDER

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
