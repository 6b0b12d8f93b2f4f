// Ops that move elements: reshape, squeeze, broadcast, transpose, pad,
// reverse, slice, put_slice, concatenate, stack. An op that would change
// nothing returns its argument.
#include <algorithm>

#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

using detail::convert;
using detail::make;
using detail::require;
using detail::strengthen;

namespace {

bool is_identity(const std::vector<int64_t>& axes) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Dynamic start indices: integer scalars, as s64 operands.
std::vector<Expr> start_operands(std::string_view op, const Shape& x, const std::vector<Expr>& starts) {
  if (starts.size() != static_cast<size_t>(x.rank())) {
    infer::shape_error(op, "starts", infer::cat(x.rank(), " entries (one per axis of ", x.str(), ")"),
                       infer::cat(starts.size()));
  }
  std::vector<Expr> out;
  for (size_t i = 0; i < starts.size(); ++i) {
    const std::string arg = infer::cat("starts[", i, "]");
    require(starts[i], op, arg);
    if (starts[i].rank() != 0) infer::shape_error(op, arg, "a scalar", starts[i].spec().str());
    if (!is_integer(starts[i].dtype()))
      infer::type_error(op, arg, "an integer dtype", dtype_name(starts[i].dtype()));
    Expr start = starts[i];
    // A u64 start of 2^63 or more would wrap to a negative s64 and clamp to
    // 0; clamped to the axis' size first, it clamps as the large value it is.
    if (start.dtype() == DType::U64) {
      start = min(start, constant(static_cast<double>(x.dim(static_cast<int>(i))), DType::U64));
    }
    out.push_back(convert(start, DType::S64));
  }
  return out;
}

}  // namespace

Expr reshape(Expr x, Shape shape) {
  require(x, "reshape", "x");
  x = strengthen(x);
  infer::reshape(x.shape(), shape);
  if (x.shape() == shape) return x;
  return make(Op::Reshape, {x.dtype(), std::move(shape)}, {x});
}

Expr squeeze(Expr x, const Axes& axes) {
  require(x, "squeeze", "x");
  const std::vector<int64_t> drop = infer::squeeze_axes(x.shape(), axes);
  std::vector<int64_t> dims;
  size_t k = 0;
  for (int i = 0; i < x.rank(); ++i) {
    if (k < drop.size() && drop[k] == i) {
      ++k;
    } else {
      dims.push_back(x.shape()[i]);
    }
  }
  return reshape(x, Shape(std::move(dims)));
}

Expr broadcast(Expr x, Shape shape, const Axes& axes) {
  require(x, "broadcast", "x");
  x = strengthen(x);
  Attrs a;
  a.axes = infer::broadcast_axes(x.shape(), shape, axes);
  if (x.shape() == shape && is_identity(a.axes)) return x;
  return make(Op::Broadcast, {x.dtype(), std::move(shape)}, {x}, std::move(a));
}

Expr transpose(Expr x, const Axes& axes) {
  require(x, "transpose", "x");
  x = strengthen(x);
  Attrs a;
  a.axes = infer::transpose_permutation(x.shape(), axes);
  if (is_identity(a.axes)) return x;
  Shape shape = infer::transpose(x.shape(), a.axes);
  return make(Op::Transpose, {x.dtype(), std::move(shape)}, {x}, std::move(a));
}

Expr pad(Expr x, Expr value, const std::vector<PadDim>& config) {
  require(x, "pad", "x");
  require(value, "pad", "value");
  x = strengthen(x);
  if (value.rank() != 0) infer::shape_error("pad", "value", "a scalar", value.spec().str());
  Shape shape = infer::pad(x.shape(), config);
  bool none = true;
  for (const PadDim& p : config) none = none && p == PadDim{};
  if (none) return x;
  Attrs a;
  a.padding = config;
  return make(Op::Pad, {x.dtype(), std::move(shape)}, {x, convert(value, x.dtype())}, std::move(a));
}

Expr reverse(Expr x, const Axes& axes) {
  require(x, "reverse", "x");
  x = strengthen(x);
  Attrs a;
  a.axes = infer::normalize_axes("reverse", "axes", x.rank(), axes, true);
  if (a.axes.empty()) return x;
  return make(Op::Reverse, x.spec(), {x}, std::move(a));
}

Expr slice(Expr x, const std::vector<int64_t>& starts, const std::vector<int64_t>& lengths,
           const std::vector<int64_t>& strides) {
  require(x, "slice", "x");
  x = strengthen(x);
  Attrs a;
  a.strides = infer::slice_strides(x.shape(), lengths, strides);
  Shape shape = infer::slice(x.shape(), starts, lengths, a.strides);
  if (shape == x.shape() && std::all_of(starts.begin(), starts.end(), [](int64_t s) { return s == 0; }))
    return x;
  a.starts = starts;
  a.lengths = lengths;
  return make(Op::Slice, {x.dtype(), std::move(shape)}, {x}, std::move(a));
}

Expr slice(Expr x, const std::vector<Expr>& starts, const std::vector<int64_t>& lengths,
           const std::vector<int64_t>& strides) {
  require(x, "slice", "x");
  x = strengthen(x);
  Attrs a;
  a.strides = infer::slice_strides(x.shape(), lengths, strides);
  Shape shape = infer::dynamic_slice(x.shape(), lengths, a.strides);
  a.lengths = lengths;
  std::vector<Expr> operands{x};
  for (Expr& s : start_operands("slice", x.shape(), starts)) operands.push_back(std::move(s));
  return make(Op::Slice, {x.dtype(), std::move(shape)}, operands, std::move(a));
}

Expr put_slice(Expr x, const std::vector<int64_t>& starts, Expr update) {
  require(x, "put_slice", "x");
  require(update, "put_slice", "update");
  const DType t = detail::merge_types({x, update});
  Attrs a;
  a.starts = infer::put_slice(x.shape(), update.shape(), starts);
  return make(Op::PutSlice, {t, x.shape()}, {convert(x, t), convert(update, t)}, std::move(a));
}

Expr put_slice(Expr x, const std::vector<Expr>& starts, Expr update) {
  require(x, "put_slice", "x");
  require(update, "put_slice", "update");
  const DType t = detail::merge_types({x, update});
  infer::dynamic_put_slice(x.shape(), update.shape());
  std::vector<Expr> operands{convert(x, t), convert(update, t)};
  for (Expr& s : start_operands("put_slice", x.shape(), starts)) operands.push_back(std::move(s));
  return make(Op::PutSlice, {t, x.shape()}, operands);
}

Expr concatenate(const std::vector<Expr>& xs, int64_t axis) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < xs.size(); ++i) {
    require(xs[i], "concatenate", infer::cat("xs[", i, "]"));
    shapes.push_back(xs[i].shape());
  }
  Shape shape = infer::concatenate(shapes, axis);
  if (xs.size() == 1) return strengthen(xs[0]);
  const DType t = detail::merge_types(xs);
  Attrs a;
  a.axis = infer::normalize_axis("concatenate", "axis", shape.rank(), axis);
  std::vector<Expr> operands;
  for (const Expr& x : xs) operands.push_back(convert(x, t));
  return make(Op::Concatenate, {t, std::move(shape)}, operands, std::move(a));
}

Expr stack(const std::vector<Expr>& xs, int64_t axis) {
  if (xs.empty()) infer::shape_error("stack", "xs", "at least one tensor", "none");
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::string arg = infer::cat("xs[", i, "]");
    require(xs[i], "stack", arg);
    if (xs[i].shape() != xs[0].shape()) {
      infer::shape_error("stack", arg, infer::cat("the shape of xs[0] ", xs[0].spec().str()),
                         xs[i].spec().str());
    }
  }
  const int64_t ax = infer::normalize_axis("stack", "axis", xs[0].rank() + 1, axis);
  std::vector<int64_t> dims = xs[0].shape().dims();
  dims.insert(dims.begin() + ax, 1);
  const Shape shape = infer::result_shape("stack", std::move(dims));
  std::vector<Expr> parts;
  for (const Expr& x : xs) parts.push_back(reshape(x, shape));
  return concatenate(parts, ax);
}

}  // namespace sluice
