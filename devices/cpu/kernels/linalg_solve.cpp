// cholesky, triangular_solve and solve, one matrix at a time (matrices
// spread across cores): LAPACK's potrf, cblas' trsm and LAPACK's gesv.
// A matrix potrf or gesv cannot handle (not positive definite, singular)
// gives NaNs, as ops.h says; trsm divides by a zero pivot as IEEE does.
#include <algorithm>
#include <vector>

#include <sluice/devices/cpu/kernels/lapack.h>
#include <sluice/devices/cpu/kernels/linalg_internal.h>

namespace sluice::cpu::linalg {
namespace {

// Elements of one right-hand side b (and x): a vector [k] or a matrix.
int64_t rhs_size(const Node& node) {
  const Shape& b = node.spec.shape;
  if (b.rank() == node.operands[0]->spec.shape.rank() - 1) return b[b.rank() - 1];
  return b[b.rank() - 2] * b[b.rank() - 1];
}

template <typename T>
void cholesky_matrices(const Matrices& a, const T* in, T* out) {
  const int64_t n = a.rows;
  for_each_matrix(a.count, n * n * n, [&](int64_t i) {
    T* l = out + i * a.size();
    std::copy(in + i * a.size(), in + (i + 1) * a.size(), l);
    if (lapack::potrf_lower(l, static_cast<lapack_int>(n)) != 0) return fill_nan(l, a.size());
    for (int64_t r = 0; r < n; ++r)
      std::fill(l + r * n + r + 1, l + (r + 1) * n, T(0));  // potrf leaves the upper triangle
  });
}

CBLAS_TRANSPOSE cblas_transform(TriangularTransform t) {
  switch (t) {
    case TriangularTransform::None: return CblasNoTrans;
    case TriangularTransform::Transpose: return CblasTrans;
    case TriangularTransform::ConjugateTranspose: return CblasConjTrans;
  }
  return CblasNoTrans;
}

template <typename T>
void triangular_solve_matrices(const Node& node, const T* a, const T* b, T* x) {
  const LinAlgAttrs& o = node.attrs.linalg;
  const Matrices am = matrices_of(node.operands[0]->spec.shape);
  const Shape& bs = node.spec.shape;
  const bool vector = bs.rank() == node.operands[0]->spec.shape.rank() - 1;
  const int64_t k = am.rows, size = rhs_size(node);
  // b as the matrix trsm sees: a column [k][1] on the left, a row [1][k] on the right.
  const int64_t rows = vector ? (o.left_side ? k : 1) : bs[bs.rank() - 2];
  const lapack::Trsm t{o.left_side ? CblasLeft : CblasRight,
                       o.lower ? CblasLower : CblasUpper,
                       cblas_transform(o.transform),
                       static_cast<blasint>(rows),
                       static_cast<blasint>(size / std::max<int64_t>(rows, 1)),
                       static_cast<blasint>(k)};
  std::copy(b, b + node.spec.size(), x);
  if (size == 0 || k == 0) return;
  for_each_matrix(am.count, k * size, [&](int64_t i) { lapack::trsm(t, a + i * am.size(), x + i * size); });
}

template <typename T>
void solve_matrices(const Node& node, const T* a, const T* b, T* x) {
  const Matrices am = matrices_of(node.operands[0]->spec.shape);
  const int64_t n = am.rows, size = rhs_size(node);
  std::copy(b, b + node.spec.size(), x);
  if (n == 0 || size == 0) return;
  for_each_matrix(am.count, n * n * n, [&](int64_t i) {
    std::vector<T> lu(a + i * am.size(), a + (i + 1) * am.size());
    std::vector<lapack_int> pivots(static_cast<size_t>(n));
    T* xi = x + i * size;
    const lapack_int info = lapack::gesv(lu.data(), static_cast<lapack_int>(n), xi,
                                         static_cast<lapack_int>(size / n), pivots.data());
    if (info != 0) fill_nan(xi, size);
  });
}

}  // namespace

void cholesky(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  visit_lapack(node.spec.dtype, [&]<typename T>() {
    cholesky_matrices(matrices_of(node.spec.shape), static_cast<const T*>(in[0]), static_cast<T*>(out[0]));
  });
}

void triangular_solve(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  visit_lapack(node.spec.dtype, [&]<typename T>() {
    triangular_solve_matrices(node, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]),
                              static_cast<T*>(out[0]));
  });
}

void solve(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  visit_lapack(node.spec.dtype, [&]<typename T>() {
    solve_matrices(node, static_cast<const T*>(in[0]), static_cast<const T*>(in[1]), static_cast<T*>(out[0]));
  });
}

}  // namespace sluice::cpu::linalg
