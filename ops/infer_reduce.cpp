// Shapes and types of reductions.
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {

DType reduce_type(Op op, DType x) {
  switch (op) {
    case Op::Sum:
    case Op::Product:
      if (dtype_kind(x) == DTypeKind::Signed) return DType::S64;
      if (dtype_kind(x) == DTypeKind::Unsigned || x == DType::Pred) return DType::U64;
      return x;
    case Op::All:
    case Op::Any: return DType::Pred;
    default:
      if (is_complex(x))
        type_error(op_name(op), "x", "a real dtype (complex numbers have no order)", dtype_name(x));
      return x;
  }
}

Shape reduce(const Shape& x, const std::vector<int64_t>& axes, bool keep_axes) {
  std::vector<int64_t> dims;
  size_t k = 0;
  for (int i = 0; i < x.rank(); ++i) {
    const bool reduced = k < axes.size() && axes[k] == i;
    if (reduced) ++k;
    if (!reduced) {
      dims.push_back(x[i]);
    } else if (keep_axes) {
      dims.push_back(1);
    }
  }
  return Shape(std::move(dims));
}

Shape arg_reduce(std::string_view op, const Shape& x, int64_t axis, bool keep_axis) {
  if (axis < 0) {
    if (x.size() == 0) shape_error(op, "x", "at least one element", cat(x.str(), " (no elements)"));
    return keep_axis ? Shape(std::vector<int64_t>(static_cast<size_t>(x.rank()), 1)) : Shape();
  }
  if (x[static_cast<int>(axis)] == 0)
    shape_error(op, "axis", "an axis of size >= 1", cat("axis ", axis, " of ", x.str()));
  return reduce(x, {axis}, keep_axis);
}

}  // namespace sluice::infer
