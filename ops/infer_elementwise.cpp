// Types and shapes of elementwise ops and conversions.
#include <algorithm>

#include "ops/shape_inference.h"

namespace sluice::infer {
namespace {

// Arithmetic on pred (stored as 0/1 bytes) computes in u8, as Nx, which has
// no pred and stores booleans as u8.
DType arithmetic(DType t) { return t == DType::Pred ? DType::U8 : t; }

void require_real(Op op, std::string_view arg, DType t) {
  if (is_complex(t)) type_error(op_name(op), arg, "a real dtype", dtype_name(t));
}

void require_integer(Op op, std::string_view arg, DType t) {
  if (!is_integer(t) && t != DType::Pred)
    type_error(op_name(op), arg, "an integer or pred dtype", dtype_name(t));
}

// Property sets, as tinygrad keeps them: one list per property.
constexpr Op kFloatFunctions[] = {Op::Exp,   Op::Expm1,   Op::Log,  Op::Log1p, Op::Sqrt,  Op::Rsqrt,
                                  Op::Cbrt,  Op::Sin,     Op::Cos,  Op::Tan,   Op::Asin,  Op::Acos,
                                  Op::Atan,  Op::Sinh,    Op::Cosh, Op::Tanh,  Op::Asinh, Op::Acosh,
                                  Op::Atanh, Op::Sigmoid, Op::Erf,  Op::Erfc,  Op::ErfInv};
// No complex counterpart: ordering, rounding, special functions.
constexpr Op kRealOnly[] = {Op::Floor,     Op::Ceil,    Op::Round,        Op::Cbrt, Op::Erf, Op::Erfc,
                            Op::ErfInv,    Op::Atan2,   Op::Remainder,    Op::Min,  Op::Max, Op::Less,
                            Op::LessEqual, Op::Greater, Op::GreaterEqual, Op::Clip};
constexpr Op kBitwise[] = {Op::BitwiseAnd, Op::BitwiseOr, Op::BitwiseXor, Op::BitwiseNot};
constexpr Op kIntegerOnly[] = {Op::Quotient,   Op::LeftShift,         Op::RightShift,
                               Op::BitwiseAnd, Op::CountLeadingZeros, Op::PopulationCount,
                               Op::BitwiseOr,  Op::BitwiseXor,        Op::BitwiseNot};

}  // namespace

Shape broadcast_shapes(std::string_view op, const std::vector<Shape>& shapes) {
  int rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.rank());
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  for (const Shape& s : shapes) {
    const int offset = rank - s.rank();
    for (int i = 0; i < s.rank(); ++i) {
      int64_t& d = dims[static_cast<size_t>(offset + i)];
      if (s[i] == d || s[i] == 1) continue;
      if (d != 1) {
        std::string found;
        for (size_t k = 0; k < shapes.size(); ++k) {
          append(found, cat(k ? " and " : "", shapes[k].rank() ? shapes[k].str() : "[] (scalar)"));
        }
        shape_error(op, "shapes", "dims that match or are 1, aligned from the right",
                    cat(found, " (result axis ", offset + i, ": ", d, " vs ", s[i], ")"));
      }
      d = s[i];
    }
  }
  return Shape(std::move(dims));
}

ElementwiseTypes unary(Op op, DType x) {
  if (std::ranges::count(kRealOnly, op) != 0) require_real(op, "x", x);
  if (std::ranges::count(kIntegerOnly, op) != 0) require_integer(op, "x", x);
  if (std::ranges::count(kFloatFunctions, op) != 0) return {to_floating(x), to_floating(x)};
  switch (op) {
    case Op::IsNan:
    case Op::IsInfinity: return {x, DType::Pred};
    case Op::BitwiseNot: return {x, x};
    case Op::Abs:
    case Op::Real:
    case Op::Imag: return {arithmetic(x), to_real(arithmetic(x))};
    case Op::Conjugate:
      if (!is_complex(x))
        type_error(op_name(op), "x", "a complex dtype (the builder converts reals)", dtype_name(x));
      return {x, x};
    default: return {arithmetic(x), arithmetic(x)};
  }
}

ElementwiseTypes binary(Op op, DType a, DType b, DType merged) {
  // Checking each argument suffices: integers merge to integers, reals to reals.
  if (std::ranges::count(kRealOnly, op) != 0) {
    require_real(op, "a", a);
    require_real(op, "b", b);
  }
  if (std::ranges::count(kIntegerOnly, op) != 0) {
    require_integer(op, "a", a);
    require_integer(op, "b", b);
  }
  if (is_comparison(op) || is_logical(op)) return {merged, DType::Pred};
  if (std::ranges::count(kBitwise, op) != 0) return {merged, merged};
  if (op == Op::Divide || op == Op::Atan2) return {to_floating(merged), to_floating(merged)};
  return {arithmetic(merged), arithmetic(merged)};
}

ElementwiseTypes ternary(Op op, DType merged) {
  if (op == Op::Clip) {
    require_real(op, "x, min and max (merged)", merged);
    return {arithmetic(merged), arithmetic(merged)};
  }
  return {merged, merged};
}

DType merge_weak(DType strong, DType weak) {
  if (is_integer(weak) || weak == DType::Pred) return arithmetic(strong);
  if (is_float(weak)) return is_inexact(strong) ? strong : DType::F32;
  // A weak complex (from arithmetic on weak scalars) needs a complex result.
  if (is_complex(strong)) return strong;
  return is_float(strong) ? to_complex(strong) : DType::C64;
}

void bitcast(DType from, DType to) {
  if (to == DType::Pred) type_error("bitcast", "dtype", "a non-pred dtype (pred holds only 0 and 1)", "pred");
  if (dtype_bits(from) != dtype_bits(to)) {
    type_error("bitcast", "dtype", cat("a dtype of ", dtype_bits(from), " bits (as x: ", from, ")"),
               cat(to, " (", dtype_bits(to), " bits)"));
  }
}

}  // namespace sluice::infer
