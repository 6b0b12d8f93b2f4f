// Shapes and types of the linear algebra ops.
#include <algorithm>

#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {
namespace {

// a's dims with its last two replaced by {rows, cols}.
Shape with_matrix(const Shape& a, int64_t rows, int64_t cols) {
  std::vector<int64_t> dims = a.dims();
  dims[dims.size() - 2] = rows;
  dims.back() = cols;
  return Shape(std::move(dims));
}

}  // namespace

DType linalg_type(std::string_view op, std::string_view arg, DType x) {
  if (x == DType::F16 || x == DType::BF16)
    type_error(op, arg, "f32, f64, c64 or c128 (LAPACK has no half precision: convert to f32 first)",
               dtype_name(x));
  return is_inexact(x) ? x : to_floating(x);
}

void matrices(std::string_view op, std::string_view arg, const Spec& x, bool square) {
  const Shape& a = x.shape;
  const int r = a.rank();
  if (r < 2) shape_error(op, arg, "a batch of matrices [..., m, n] (rank >= 2)", x.str());
  if (square && a[r - 2] != a[r - 1]) shape_error(op, arg, "a batch of square matrices [..., n, n]", x.str());
}

void right_hand_side(std::string_view op, const Spec& x, const Spec& y, bool left_side) {
  const Shape &a = x.shape, &b = y.shape;
  const int r = a.rank();
  const int64_t n = a[r - 1];
  const bool vector = b.rank() == r - 1;
  if (!vector && b.rank() != r)
    shape_error(op, "b", cat("a vector of rank ", r - 1, " or a matrix of rank ", r, " (as a ", x, ")"),
                y.str());
  for (int i = 0; i < r - 2; ++i)
    if (b[i] != a[i])
      shape_error(op, "b", cat("the batch dims of a ", x, " (dim ", i, " of ", a[i], ")"), y.str());
  const int along = vector ? r - 2 : (left_side ? r - 2 : r - 1);
  if (b[along] != n) {
    const std::string_view where = vector ? "its last dim" : (left_side ? "its rows" : "its columns");
    shape_error(op, "b", cat(n, " in ", where, " (as a ", x, ")"), y.str());
  }
}

std::vector<Spec> linalg_results(Op op, const Spec& a, const LinAlgAttrs& attrs) {
  const Shape& s = a.shape;
  const int64_t m = s[s.rank() - 2], n = s[s.rank() - 1], k = std::min(m, n);
  switch (op) {
    case Op::Qr:
      if (attrs.mode == QrMode::Complete) return {{a.dtype, with_matrix(s, m, m)}, {a.dtype, s}};
      return {{a.dtype, with_matrix(s, m, k)}, {a.dtype, with_matrix(s, k, n)}};
    case Op::Lu: return {{DType::S64, s}, a, a};
    case Op::Eigh: {
      std::vector<int64_t> dims(s.dims().begin(), s.dims().end() - 1);
      return {{to_real(a.dtype), Shape(std::move(dims))}, a};
    }
    default:
      throw InternalError(
          error_message("linalg_results", cat(op_name(op), " has one result, not several"), "", ""));
  }
}

}  // namespace sluice::infer
