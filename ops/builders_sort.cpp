// Sorting: sort and argsort are catalogue ops (attrs.axis, attrs.reverse for
// descending, attrs.dtype for argsort's indices); top_k is argsort, a slice
// and take_along_axis.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

using detail::make;
using detail::require;

namespace {

Attrs sort_attrs(std::string_view op, const Expr& x, const SortOptions& o) {
  infer::sort(op, x.spec(), o.axis);
  Attrs a;
  a.axis = infer::normalize_axis(op, "axis", x.rank(), o.axis);
  a.reverse = o.direction == SortDirection::Descending;
  return a;
}

}  // namespace

Expr sort(Expr x, const SortOptions& o) {
  require(x, "sort", "x");
  x = detail::strengthen(x);
  return make(Op::Sort, x.spec(), {x}, sort_attrs("sort", x, o));
}

Expr argsort(Expr x, const SortOptions& o) {
  require(x, "argsort", "x");
  x = detail::strengthen(x);
  Attrs a = sort_attrs("argsort", x, o);
  infer::sort_index_type("argsort", o.index_dtype, x.shape()[static_cast<int>(a.axis)]);
  a.dtype = o.index_dtype;
  return make(Op::Argsort, {o.index_dtype, x.shape()}, {x}, std::move(a));
}

TopK top_k(Expr x, int64_t k) {
  require(x, "top_k", "x");
  x = detail::strengthen(x);
  if (x.rank() == 0) infer::shape_error("top_k", "x", "rank >= 1", "a scalar");
  const int64_t n = x.shape()[x.rank() - 1];
  if (k < 0 || k > n) infer::shape_error("top_k", "k", infer::cat("0 to the last dim ", n), infer::cat(k));
  const Expr order = argsort(x, {.axis = -1, .direction = SortDirection::Descending});
  std::vector<int64_t> lengths = x.shape().dims();
  lengths.back() = k;
  const Expr indices = slice(order, std::vector<int64_t>(lengths.size(), 0), lengths);
  return {take_along_axis(x, indices, -1), indices};
}

}  // namespace sluice
