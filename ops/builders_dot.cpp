// dot: the general contraction (Nx dot/6) and Nx's dot/2 conveniences.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

using detail::require;

namespace {

std::vector<int64_t> normalized(std::string_view arg, const Expr& x, const Axes& axes) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(infer::normalize_axis("dot", arg, x.rank(), a));
  return out;
}

}  // namespace

Expr dot(Expr a, const Axes& contract_a, const Axes& batch_a, Expr b, const Axes& contract_b,
         const Axes& batch_b) {
  require(a, "dot", "a");
  require(b, "dot", "b");
  Attrs attrs;
  attrs.contract_a = normalized("contract_a", a, contract_a);
  attrs.batch_a = normalized("batch_a", a, batch_a);
  attrs.contract_b = normalized("contract_b", b, contract_b);
  attrs.batch_b = normalized("batch_b", b, batch_b);
  Shape shape =
      infer::dot(a.shape(), attrs.contract_a, attrs.batch_a, b.shape(), attrs.contract_b, attrs.batch_b);
  const DType t = infer::dot_type(detail::merge_types({a, b}));
  return detail::make(Op::Dot, {t, std::move(shape)}, {detail::convert(a, t), detail::convert(b, t)},
                      std::move(attrs));
}

// Nx dot/2: a scalar scales; otherwise a's last axis meets b's only axis, or
// b's second to last.
Expr dot(Expr a, Expr b) {
  require(a, "dot", "a");
  require(b, "dot", "b");
  if (a.rank() == 0 || b.rank() == 0) return multiply(a, b);
  const int64_t axis_b = b.rank() == 1 ? 0 : b.rank() - 2;
  return dot(a, {a.rank() - 1}, {}, b, {axis_b}, {});
}

}  // namespace sluice
