// Types and shapes of elementwise ops and conversions.
#include <algorithm>

#include <sluice/ops/detail/shape_inference.h>

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

// The operand checks of an op's catalogue entry, for one argument.
void check_operand(Op op, std::string_view arg, DType t) {
  if (op_has(op, kRealOnly)) require_real(op, arg, t);
  const OpTypeRule rule = op_type_rule(op);
  if (rule == OpTypeRule::Bitwise || rule == OpTypeRule::IntegerOnly) require_integer(op, arg, t);
  if (rule == OpTypeRule::ComplexOnly && !is_complex(t))
    type_error(op_name(op), arg, "a complex dtype (the builder converts reals)", dtype_name(t));
}

// The compute dtype the catalogue's type rule gives operands of dtype t;
// the result's is op_result_dtype of it.
ElementwiseTypes types(Op op, DType t) {
  DType compute = t;
  switch (op_type_rule(op)) {
    case OpTypeRule::Floating: compute = to_floating(t); break;
    case OpTypeRule::Arithmetic:
    case OpTypeRule::ToReal:
    case OpTypeRule::IntegerOnly: compute = arithmetic(t); break;
    default: break;
  }
  return {compute, op_result_dtype(op, compute)};
}

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
  check_operand(op, "x", x);
  return types(op, x);
}

ElementwiseTypes binary(Op op, DType a, DType b, DType merged) {
  // Checking each argument suffices: integers merge to integers, reals to reals.
  check_operand(op, "a", a);
  check_operand(op, "b", b);
  return types(op, merged);
}

ElementwiseTypes ternary(Op op, DType merged) {
  check_operand(op, "x, min and max (merged)", merged);
  return types(op, merged);
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
