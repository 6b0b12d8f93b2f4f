#pragma once
// LAPACKE and cblas (gemm, trsm) as one overload set over the four
// types LAPACK computes in (float, double, complex64, complex128), so that
// the linear algebra, dot and conv kernels are written once as templates.
// Matrices are row-major (LAPACKE transposes to LAPACK's column order and
// back). The LAPACK routines return LAPACK's info: 0 on success, > 0 for a
// numerical failure (a non-positive-definite or singular matrix, no
// convergence).

#include <type_traits>

#include <sluice/devices/cpu/kernels/blas_library.h>
#include <sluice/ops/dtype.h>

namespace sluice::cpu::lapack {

template <typename T>
concept Type = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, complex64> ||
    std::is_same_v<T, complex128>;

// The real type of T (eigenvalues).
template <typename T>
using Real = decltype(std::abs(T{}));

constexpr int kRow = LAPACK_ROW_MAJOR;

// Lower Cholesky factor in place.
inline lapack_int potrf_lower(float* a, lapack_int n) { return blas().LAPACKE_spotrf(kRow, 'L', n, a, n); }
inline lapack_int potrf_lower(double* a, lapack_int n) { return blas().LAPACKE_dpotrf(kRow, 'L', n, a, n); }
inline lapack_int potrf_lower(complex64* a, lapack_int n) {
  return blas().LAPACKE_cpotrf(kRow, 'L', n, a, n);
}
inline lapack_int potrf_lower(complex128* a, lapack_int n) {
  return blas().LAPACKE_zpotrf(kRow, 'L', n, a, n);
}

// a x = b for x in b [n][nrhs]; a overwritten by its LU factors.
inline lapack_int gesv(float* a, lapack_int n, float* b, lapack_int nrhs, lapack_int* ipiv) {
  return blas().LAPACKE_sgesv(kRow, n, nrhs, a, n, ipiv, b, nrhs);
}
inline lapack_int gesv(double* a, lapack_int n, double* b, lapack_int nrhs, lapack_int* ipiv) {
  return blas().LAPACKE_dgesv(kRow, n, nrhs, a, n, ipiv, b, nrhs);
}
inline lapack_int gesv(complex64* a, lapack_int n, complex64* b, lapack_int nrhs, lapack_int* ipiv) {
  return blas().LAPACKE_cgesv(kRow, n, nrhs, a, n, ipiv, b, nrhs);
}
inline lapack_int gesv(complex128* a, lapack_int n, complex128* b, lapack_int nrhs, lapack_int* ipiv) {
  return blas().LAPACKE_zgesv(kRow, n, nrhs, a, n, ipiv, b, nrhs);
}

// LU factors of a square a in place; pivots in ipiv (1-based: row i was
// swapped with row ipiv[i] - 1).
inline lapack_int getrf(float* a, lapack_int n, lapack_int* ipiv) {
  return blas().LAPACKE_sgetrf(kRow, n, n, a, n, ipiv);
}
inline lapack_int getrf(double* a, lapack_int n, lapack_int* ipiv) {
  return blas().LAPACKE_dgetrf(kRow, n, n, a, n, ipiv);
}
inline lapack_int getrf(complex64* a, lapack_int n, lapack_int* ipiv) {
  return blas().LAPACKE_cgetrf(kRow, n, n, a, n, ipiv);
}
inline lapack_int getrf(complex128* a, lapack_int n, lapack_int* ipiv) {
  return blas().LAPACKE_zgetrf(kRow, n, n, a, n, ipiv);
}

// Householder QR of a [m][n] in place: r on and above the diagonal,
// reflectors below it, their scales in tau[min(m, n)].
inline lapack_int geqrf(float* a, lapack_int m, lapack_int n, float* tau) {
  return blas().LAPACKE_sgeqrf(kRow, m, n, a, n, tau);
}
inline lapack_int geqrf(double* a, lapack_int m, lapack_int n, double* tau) {
  return blas().LAPACKE_dgeqrf(kRow, m, n, a, n, tau);
}
inline lapack_int geqrf(complex64* a, lapack_int m, lapack_int n, complex64* tau) {
  return blas().LAPACKE_cgeqrf(kRow, m, n, a, n, tau);
}
inline lapack_int geqrf(complex128* a, lapack_int m, lapack_int n, complex128* tau) {
  return blas().LAPACKE_zgeqrf(kRow, m, n, a, n, tau);
}

// q [m][n] (its first k columns holding geqrf's reflectors) made into the
// first n columns of Q (orgqr; ungqr for complex).
inline lapack_int orgqr(float* q, lapack_int m, lapack_int n, lapack_int k, const float* tau) {
  return blas().LAPACKE_sorgqr(kRow, m, n, k, q, n, tau);
}
inline lapack_int orgqr(double* q, lapack_int m, lapack_int n, lapack_int k, const double* tau) {
  return blas().LAPACKE_dorgqr(kRow, m, n, k, q, n, tau);
}
inline lapack_int orgqr(complex64* q, lapack_int m, lapack_int n, lapack_int k, const complex64* tau) {
  return blas().LAPACKE_cungqr(kRow, m, n, k, q, n, tau);
}
inline lapack_int orgqr(complex128* q, lapack_int m, lapack_int n, lapack_int k, const complex128* tau) {
  return blas().LAPACKE_zungqr(kRow, m, n, k, q, n, tau);
}

// Eigenvalues (ascending, in w) and eigenvectors (a's columns, in place) of
// a Hermitian a whose lower triangle is read (syevd; heevd for complex).
inline lapack_int eigh_lower(float* a, lapack_int n, float* w) {
  return blas().LAPACKE_ssyevd(kRow, 'V', 'L', n, a, n, w);
}
inline lapack_int eigh_lower(double* a, lapack_int n, double* w) {
  return blas().LAPACKE_dsyevd(kRow, 'V', 'L', n, a, n, w);
}
inline lapack_int eigh_lower(complex64* a, lapack_int n, float* w) {
  return blas().LAPACKE_cheevd(kRow, 'V', 'L', n, a, n, w);
}
inline lapack_int eigh_lower(complex128* a, lapack_int n, double* w) {
  return blas().LAPACKE_zheevd(kRow, 'V', 'L', n, a, n, w);
}

// c [m][n] = op(a) op(b), row-major, a's and b's leading dims lda and ldb,
// c's n (dot's and conv's matrix products).
struct MatMul {
  CBLAS_TRANSPOSE trans_a = CblasNoTrans, trans_b = CblasNoTrans;
  blasint m = 0, n = 0, k = 0, lda = 0, ldb = 0;
};
inline void gemm(const MatMul& p, const float* a, const float* b, float* c) {
  blas().cblas_sgemm(CblasRowMajor, p.trans_a, p.trans_b, p.m, p.n, p.k, 1.0f, a, p.lda, b, p.ldb, 0.0f, c,
                     p.n);
}
inline void gemm(const MatMul& p, const double* a, const double* b, double* c) {
  blas().cblas_dgemm(CblasRowMajor, p.trans_a, p.trans_b, p.m, p.n, p.k, 1.0, a, p.lda, b, p.ldb, 0.0, c,
                     p.n);
}
inline void gemm(const MatMul& p, const complex64* a, const complex64* b, complex64* c) {
  const complex64 one(1), zero(0);
  blas().cblas_cgemm(CblasRowMajor, p.trans_a, p.trans_b, p.m, p.n, p.k, &one, a, p.lda, b, p.ldb, &zero, c,
                     p.n);
}
inline void gemm(const MatMul& p, const complex128* a, const complex128* b, complex128* c) {
  const complex128 one(1), zero(0);
  blas().cblas_zgemm(CblasRowMajor, p.trans_a, p.trans_b, p.m, p.n, p.k, &one, a, p.lda, b, p.ldb, &zero, c,
                     p.n);
}

// op(a) x = b (left) or x op(a) = b for x in b [rows][cols], a [k][k] triangular.
struct Trsm {
  CBLAS_SIDE side;
  CBLAS_UPLO uplo;
  CBLAS_TRANSPOSE trans;
  blasint rows, cols, k;
};
inline void trsm(const Trsm& t, const float* a, float* b) {
  blas().cblas_strsm(CblasRowMajor, t.side, t.uplo, t.trans, CblasNonUnit, t.rows, t.cols, 1.0f, a, t.k, b,
                     t.cols);
}
inline void trsm(const Trsm& t, const double* a, double* b) {
  blas().cblas_dtrsm(CblasRowMajor, t.side, t.uplo, t.trans, CblasNonUnit, t.rows, t.cols, 1.0, a, t.k, b,
                     t.cols);
}
inline void trsm(const Trsm& t, const complex64* a, complex64* b) {
  const complex64 one(1);
  blas().cblas_ctrsm(CblasRowMajor, t.side, t.uplo, t.trans, CblasNonUnit, t.rows, t.cols, &one, a, t.k, b,
                     t.cols);
}
inline void trsm(const Trsm& t, const complex128* a, complex128* b) {
  const complex128 one(1);
  blas().cblas_ztrsm(CblasRowMajor, t.side, t.uplo, t.trans, CblasNonUnit, t.rows, t.cols, &one, a, t.k, b,
                     t.cols);
}

}  // namespace sluice::cpu::lapack
