// Windowed reductions and the cumulative sum.
#include "ops/builders_common.h"
#include "ops/ops.h"
#include "ops/shape_inference.h"

namespace sluice {

using detail::make;
using detail::require;

namespace {

Expr window(Op op, Expr x, const std::vector<int64_t>& dims, const WindowOptions& o) {
  require(x, op_name(op), "x");
  x = detail::strengthen(x);
  Attrs a;
  a.dims = dims;
  a.strides = o.strides;
  a.padding = o.padding;
  infer::window_options(op_name(op), x.shape(), a.dims, a.strides, a.padding);
  Shape shape = infer::window(op_name(op), x.shape(), a.dims, a.strides, a.padding);
  const DType t = infer::window_type(op, x.dtype());
  return make(op, {t, std::move(shape)}, {detail::convert(x, t)}, std::move(a));
}

}  // namespace

Expr window_sum(Expr x, const std::vector<int64_t>& window_dims, const WindowOptions& o) {
  return window(Op::WindowSum, x, window_dims, o);
}
Expr window_max(Expr x, const std::vector<int64_t>& window_dims, const WindowOptions& o) {
  return window(Op::WindowMax, x, window_dims, o);
}
Expr window_min(Expr x, const std::vector<int64_t>& window_dims, const WindowOptions& o) {
  return window(Op::WindowMin, x, window_dims, o);
}

Expr cumulative_sum(Expr x, const ScanOptions& o) {
  require(x, "cumulative_sum", "x");
  x = detail::strengthen(x);
  Attrs a;
  a.axis = infer::normalize_axis("cumulative_sum", "axis", x.rank(), o.axis);
  a.reverse = o.reverse;
  const DType t = infer::window_type(Op::CumulativeSum, x.dtype());
  return make(Op::CumulativeSum, {t, x.shape()}, {detail::convert(x, t)}, std::move(a));
}

}  // namespace sluice
