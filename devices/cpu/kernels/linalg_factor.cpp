// qr, lu and eigh, one matrix at a time (matrices spread across cores):
// LAPACK's geqrf + orgqr/ungqr, getrf, syevd/heevd. Each writes all of its
// node's results (out[i] is result i).
#include <algorithm>
#include <numeric>
#include <vector>

#include <sluice/devices/cpu/kernels/linalg_internal.h>

namespace sluice::cpu::linalg {
namespace {

// q [m][qcols] and r [rrows][n] of each a [m][n]: reduced (qcols = rrows =
// min(m, n)) or complete (qcols = rrows = m).
template <typename T>
void qr_matrices(const Node& node, const T* in, T* q, T* r) {
  const Matrices a = matrices_of(node.operands[0]->spec.shape);
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  const int64_t qcols = node.attrs.linalg.mode == QrMode::Complete ? m : k, rrows = qcols;
  for_each_matrix(a.count, m * n * n, [&](int64_t i) {
    T* qi = q + i * m * qcols;
    T* ri = r + i * rrows * n;
    std::vector<T> work(in + i * a.size(), in + (i + 1) * a.size()), tau(static_cast<size_t>(k));
    if (k > 0) lapack::geqrf(work.data(), static_cast<lapack_int>(m), static_cast<lapack_int>(n), tau.data());
    for (int64_t row = 0; row < rrows; ++row)
      for (int64_t col = 0; col < n; ++col) ri[row * n + col] = col >= row ? work[row * n + col] : T(0);
    // q starts as the reflectors in its first columns (orgqr reads k of them).
    for (int64_t row = 0; row < m; ++row)
      for (int64_t col = 0; col < qcols; ++col) qi[row * qcols + col] = col < n ? work[row * n + col] : T(0);
    if (qcols > 0)
      lapack::orgqr(qi, static_cast<lapack_int>(m), static_cast<lapack_int>(qcols),
                    static_cast<lapack_int>(k), tau.data());
  });
}

// p (s64), l and u of each square a, with a = p l u.
template <typename T>
void lu_matrices(const Node& node, const T* in, int64_t* p, T* l, T* u) {
  const Matrices a = matrices_of(node.operands[0]->spec.shape);
  const int64_t n = a.rows;
  for_each_matrix(a.count, n * n * n, [&](int64_t i) {
    const int64_t at = i * a.size();
    std::vector<T> work(in + at, in + at + a.size());
    std::vector<lapack_int> pivots(static_cast<size_t>(n));
    // A zero pivot (singular a, info > 0) still leaves complete factors.
    if (n > 0) lapack::getrf(work.data(), static_cast<lapack_int>(n), pivots.data());
    for (int64_t row = 0; row < n; ++row)
      for (int64_t col = 0; col < n; ++col) {
        const T v = work[static_cast<size_t>(row * n + col)];
        l[at + row * n + col] = col < row ? v : (col == row ? T(1) : T(0));
        u[at + row * n + col] = col >= row ? v : T(0);
      }
    // getrf swapped row r with row pivots[r] - 1, in order: row r of l u is
    // row perm[r] of a, so p has a 1 at (perm[r], r).
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t{0});
    for (size_t r = 0; r < perm.size(); ++r) std::swap(perm[r], perm[static_cast<size_t>(pivots[r] - 1)]);
    std::fill(p + at, p + at + a.size(), int64_t{0});
    for (int64_t r = 0; r < n; ++r) p[at + perm[static_cast<size_t>(r)] * n + r] = 1;
  });
}

template <typename T>
void eigh_matrices(const Node& node, const T* in, lapack::Real<T>* w, T* v) {
  const Matrices a = matrices_of(node.operands[0]->spec.shape);
  const int64_t n = a.rows;
  if (n == 0) return;
  for_each_matrix(a.count, n * n * n, [&](int64_t i) {
    T* vi = v + i * a.size();
    lapack::Real<T>* wi = w + i * n;
    std::copy(in + i * a.size(), in + (i + 1) * a.size(), vi);
    if (lapack::eigh_lower(vi, static_cast<lapack_int>(n), wi) != 0) {
      fill_nan(vi, a.size());
      fill_nan(wi, n);
    }
  });
}

}  // namespace

void qr(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  visit_lapack(node.operands[0]->spec.dtype, [&]<typename T>() {
    qr_matrices(node, static_cast<const T*>(in[0]), static_cast<T*>(out[0]), static_cast<T*>(out[1]));
  });
}

void lu(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  visit_lapack(node.operands[0]->spec.dtype, [&]<typename T>() {
    lu_matrices(node, static_cast<const T*>(in[0]), static_cast<int64_t*>(out[0]), static_cast<T*>(out[1]),
                static_cast<T*>(out[2]));
  });
}

void eigh(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  visit_lapack(node.operands[0]->spec.dtype, [&]<typename T>() {
    eigh_matrices(node, static_cast<const T*>(in[0]), static_cast<lapack::Real<T>*>(out[0]),
                  static_cast<T*>(out[1]));
  });
}

}  // namespace sluice::cpu::linalg
