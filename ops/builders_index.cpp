// Gathers and scatters: gather, indexed_add and indexed_put are catalogue
// ops; take and take_along_axis are built from gather (a transpose around it
// for take along an inner axis; coordinates from iotas for take_along_axis).
// Attrs: none; the index depth k is indices' last dim.
#include <numeric>

#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

using detail::make;
using detail::require;

namespace {

// Indices as s64 for coordinates that are concatenated with iotas: u64
// indices at or above 2^63 must clamp high, not wrap to negative values.
Expr indices_as_s64(Expr indices, int64_t dim) {
  if (indices.dtype() == DType::U64)
    indices = min(indices, constant(static_cast<double>(std::max<int64_t>(dim - 1, 0)), DType::U64));
  return as_type(indices, DType::S64);
}

Expr scatter(Op op, Expr x, Expr indices, Expr updates) {
  const std::string_view name = op_name(op);
  require(x, name, "x");
  require(indices, name, "indices");
  require(updates, name, "updates");
  x = detail::strengthen(x);
  indices = detail::strengthen(indices);
  updates = detail::strengthen(updates);
  infer::scatter(name, x.spec(), indices.spec(), updates.spec());
  DType t = detail::merge_types({x, updates});
  if (op == Op::IndexedAdd && t == DType::Pred) t = DType::U8;
  return make(op, {t, x.shape()}, {detail::convert(x, t), indices, detail::convert(updates, t)});
}

// take and take_along_axis: both given, strong, and the indices integers.
void axis_index_arguments(std::string_view op, Expr& x, Expr& indices) {
  require(x, op, "x");
  require(indices, op, "indices");
  x = detail::strengthen(x);
  indices = detail::strengthen(indices);
  if (!is_integer(indices.dtype())) infer::type_error(op, "indices", "an integer dtype", dtype_name(indices.dtype()));
}

}  // namespace

Expr gather(Expr x, Expr indices) {
  require(x, "gather", "x");
  require(indices, "gather", "indices");
  x = detail::strengthen(x);
  indices = detail::strengthen(indices);
  Shape shape = infer::gather("gather", x.spec(), indices.spec());
  return make(Op::Gather, {x.dtype(), std::move(shape)}, {x, indices});
}

Expr indexed_add(Expr x, Expr indices, Expr updates) { return scatter(Op::IndexedAdd, x, indices, updates); }
Expr indexed_put(Expr x, Expr indices, Expr updates) { return scatter(Op::IndexedPut, x, indices, updates); }

Expr take(Expr x, Expr indices, int64_t axis) {
  axis_index_arguments("take", x, indices);
  const int64_t a = infer::normalize_axis("take", "axis", x.rank(), axis);
  std::vector<int64_t> column = indices.shape().dims();
  column.push_back(1);
  const Expr rows = reshape(indices, Shape(column));
  if (a == 0) return gather(x, rows);
  // Gather from x with `a` moved to the front, then put the indices' axes
  // back where `a` was.
  Axes to_front{a};
  for (int64_t k = 0; k < x.rank(); ++k)
    if (k != a) to_front.push_back(k);
  const Expr g = gather(transpose(x, to_front), rows);
  const int64_t r = indices.rank();
  Axes back;
  for (int64_t k = 0; k < a; ++k) back.push_back(r + k);
  for (int64_t k = 0; k < r; ++k) back.push_back(k);
  for (int64_t k = r + a; k < g.rank(); ++k) back.push_back(k);
  return transpose(g, back);
}

Expr take_along_axis(Expr x, Expr indices, int64_t axis) {
  axis_index_arguments("take_along_axis", x, indices);
  const int64_t a = infer::normalize_axis("take_along_axis", "axis", x.rank(), axis);
  bool fits = indices.rank() == x.rank();
  for (int k = 0; fits && k < x.rank(); ++k) fits = k == a || indices.shape()[k] == x.shape()[k];
  if (!fits)
    infer::shape_error("take_along_axis", "indices",
                       infer::cat("rank ", x.rank(), " with x's dims ", x.shape().str(), " but on axis ", a),
                       indices.shape().str());
  return gather(x, detail::along_axis_coordinates(indices, x.shape(), a));
}

Expr detail::along_axis_coordinates(const Expr& indices, const Shape& x, int64_t axis) {
  std::vector<int64_t> column = indices.shape().dims();
  column.push_back(1);
  std::vector<Expr> coordinates;
  for (int64_t k = 0; k < x.rank(); ++k) {
    const Expr c = k == axis ? indices_as_s64(indices, x[static_cast<int>(k)])
                             : iota(Spec{DType::S64, indices.shape()}, k);
    coordinates.push_back(reshape(c, Shape(column)));
  }
  return concatenate(coordinates, -1);
}

}  // namespace sluice
