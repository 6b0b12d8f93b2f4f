// Shapes and types of gathers, scatters and sorts.
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {
namespace {

// How many leading axes of x the last axis of integer `indices` indexes.
int64_t index_depth(std::string_view op, const Spec& x, const Spec& indices) {
  if (!is_integer(indices.dtype))
    type_error(op, "indices", "an integer dtype", dtype_name(indices.dtype));
  if (indices.shape.rank() == 0) shape_error(op, "indices", "rank >= 1 (the last axis indexes x)", "a scalar");
  const int64_t k = indices.shape[indices.shape.rank() - 1];
  if (k < 1 || k > x.shape.rank())
    shape_error(op, "indices", cat("a last dim from 1 to x's rank ", x.shape.rank()),
                cat(indices.shape.str(), " (last dim ", k, ")"));
  return k;
}

}  // namespace

Shape gather(std::string_view op, const Spec& x, const Spec& indices) {
  const int64_t k = index_depth(op, x, indices);
  std::vector<int64_t> dims(indices.shape.dims().begin(), indices.shape.dims().end() - 1);
  int64_t rows = 1;
  for (int64_t d : dims) rows *= d;
  for (int i = 0; i < x.shape.rank(); ++i) {
    if (i < k && x.shape[i] == 0 && rows > 0)
      shape_error(op, "x", cat("a non-empty axis ", i, " to index"), x.shape.str());
    if (i >= k) dims.push_back(x.shape[i]);
  }
  return result_shape(op, std::move(dims));
}

void scatter(std::string_view op, const Spec& x, const Spec& indices, const Spec& updates) {
  const int64_t k = index_depth(op, x, indices);
  std::vector<int64_t> dims(indices.shape.dims().begin(), indices.shape.dims().end() - 1);
  for (int i = static_cast<int>(k); i < x.shape.rank(); ++i) dims.push_back(x.shape[i]);
  const Shape expected(std::move(dims));
  if (!(updates.shape == expected))
    shape_error(op, "updates", cat("shape ", expected.str(), " (indices' dims but the last, then x's from ", k, ")"),
                updates.shape.str());
}

void sort(std::string_view op, const Spec& x, int64_t axis) {
  if (is_complex(x.dtype)) type_error(op, "x", "a real dtype (complex numbers have no order)", dtype_name(x.dtype));
  normalize_axis(op, "axis", x.shape.rank(), axis);
}

void sort_index_type(std::string_view op, DType index, int64_t length) {
  if (!is_integer(index)) type_error(op, "index_dtype", "an integer dtype", dtype_name(index));
  const int bits = dtype_bits(index) - (dtype_kind(index) == DTypeKind::Signed ? 1 : 0);
  if (bits < 63 && length > (int64_t{1} << bits))
    type_error(op, "index_dtype", cat("a dtype holding indices up to ", length - 1), dtype_name(index));
}

}  // namespace sluice::infer
