// constant, weak_scalar, iota, eye.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

using detail::make;

namespace {

Expr literal_node(Literal value, bool weak) {
  Spec spec = value.spec;
  Attrs a;
  a.weak = weak;
  a.literal = std::make_shared<const Literal>(std::move(value));
  return make(Op::Constant, std::move(spec), {}, std::move(a));
}

}  // namespace

Expr constant(const Literal& value) {
  if (value.bytes.size() != static_cast<size_t>(value.spec.bytes())) {
    throw ValueError(error_message("constant", "argument value",
                                   infer::cat(value.spec.bytes(), " bytes (", value.spec, ")"),
                                   infer::cat(value.bytes.size())));
  }
  return literal_node(value, false);
}

Expr constant(double value, DType dtype) { return literal_node(Literal::scalar(dtype, value), false); }

Expr weak_scalar(double value) { return literal_node(Literal::scalar(DType::F64, value), true); }

Expr weak_scalar(int64_t value) { return literal_node(Literal::of<int64_t>({value}, Shape()), true); }

Expr iota(const Spec& spec, std::optional<int64_t> axis) {
  if (spec.dtype == DType::Pred)
    infer::type_error("iota", "spec", "a numeric dtype (pred holds only 0 and 1)", "pred");
  Attrs a;
  a.axis = axis ? infer::normalize_axis("iota", "axis", spec.shape.rank(), *axis) : -1;
  a.dtype = spec.dtype;
  return make(Op::Iota, spec, {}, std::move(a));
}

Expr eye(const Spec& spec) {
  if (spec.shape.rank() < 2) infer::shape_error("eye", "spec", "rank >= 2", spec.str());
  Attrs a;
  a.dtype = spec.dtype;
  return make(Op::Eye, spec, {}, std::move(a));
}

}  // namespace sluice
