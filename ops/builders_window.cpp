// Windowed reductions, window scatters and cumulative scans.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

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
Expr window_product(Expr x, const std::vector<int64_t>& window_dims, const WindowOptions& o) {
  return window(Op::WindowProduct, x, window_dims, o);
}

namespace {

Expr window_scatter(Op op, Expr x, Expr source, Expr init, const std::vector<int64_t>& dims,
                    const WindowOptions& o) {
  const std::string_view name = op_name(op);
  require(x, name, "x");
  require(source, name, "source");
  require(init, name, "init");
  x = detail::strengthen(x);
  if (is_complex(x.dtype()))
    infer::type_error(name, "x", "a real dtype (complex numbers have no order)", dtype_name(x.dtype()));
  if (init.rank() != 0) infer::shape_error(name, "init", "a scalar", init.shape().str());
  Attrs a;
  a.dims = dims;
  a.strides = o.strides;
  a.padding = o.padding;
  infer::window_options(name, x.shape(), a.dims, a.strides, a.padding);
  const Shape windows = infer::window(name, x.shape(), a.dims, a.strides, a.padding);
  if (source.shape() != windows)
    infer::shape_error(name, "source", infer::cat(windows.str(), " (one element per window of x)"),
                       source.shape().str());
  DType t = detail::merge_types({source, init});
  if (t == DType::Pred) t = DType::U8;
  return make(op, {t, x.shape()}, {x, detail::convert(source, t), detail::convert(init, t)}, std::move(a));
}

Expr scan(Op op, Expr x, const ScanOptions& o) {
  const std::string_view name = op_name(op);
  require(x, name, "x");
  x = detail::strengthen(x);
  Attrs a;
  a.axis = infer::normalize_axis(name, "axis", x.rank(), o.axis);
  a.reverse = o.reverse;
  const DType t = infer::window_type(op, x.dtype());
  return make(op, {t, x.shape()}, {detail::convert(x, t)}, std::move(a));
}

}  // namespace

Expr window_scatter_max(Expr x, Expr source, Expr init, const std::vector<int64_t>& window_dims,
                        const WindowOptions& o) {
  return window_scatter(Op::WindowScatterMax, x, source, init, window_dims, o);
}
Expr window_scatter_min(Expr x, Expr source, Expr init, const std::vector<int64_t>& window_dims,
                        const WindowOptions& o) {
  return window_scatter(Op::WindowScatterMin, x, source, init, window_dims, o);
}

Expr cumulative_sum(Expr x, const ScanOptions& o) { return scan(Op::CumulativeSum, x, o); }
Expr cumulative_product(Expr x, const ScanOptions& o) { return scan(Op::CumulativeProduct, x, o); }
Expr cumulative_max(Expr x, const ScanOptions& o) { return scan(Op::CumulativeMax, x, o); }
Expr cumulative_min(Expr x, const ScanOptions& o) { return scan(Op::CumulativeMin, x, o); }

}  // namespace sluice
