// The linear algebra ops on the host, checked by what defines them rather
// than against stored values (vectors' signs and phases are not unique):
// q r = a with qᴴ q = I, p l u = a, a v = v diag(w) with vᴴ v = I, l lᴴ = a,
// op(a) x = b. Batches large enough to be spread across threads; what a
// matrix LAPACK cannot factor gives (NaNs, for that matrix alone); a node's
// results read in part, and inside a scan's body.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include "tests/devices/run_traced.h"

namespace sluice {
namespace {

using testing::run;
using testing::run1;
using C = complex128;

// A batch of `count` row-major n x m matrices on the host.
template <typename T>
struct Batch {
  int64_t count, n, m;
  std::vector<T> v;
  T at(int64_t b, int64_t i, int64_t j) const { return v[static_cast<size_t>((b * n + i) * m + j)]; }
};

template <typename T>
Batch<T> batch_of(const Tensor& t) {
  const Shape& s = t.spec().shape;
  const int r = s.rank();
  return {t.spec().size() / std::max<int64_t>(s[r - 2] * s[r - 1], 1), s[r - 2], s[r - 1], t.to_vector<T>()};
}

template <typename T>
T conj_of(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x;
  else
    return std::conj(x);
}

// (a op_b(b))[i][j] where op_b conjugate-transposes b when `adjoint_b`.
template <typename T>
T product(const Batch<T>& a, const Batch<T>& b, int64_t k, int64_t i, int64_t j, bool adjoint_b = false) {
  T s = 0;
  for (int64_t t = 0; t < a.m; ++t) s += a.at(k, i, t) * (adjoint_b ? conj_of(b.at(k, j, t)) : b.at(k, t, j));
  return s;
}

template <typename T>
std::vector<T> random_values(int64_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> u;
  std::vector<T> v(static_cast<size_t>(count));
  for (T& x : v) {
    if constexpr (std::is_floating_point_v<T>)
      x = static_cast<T>(u(rng));
    else
      x = T(u(rng), u(rng));
  }
  return v;
}

template <typename T>
Tensor random_tensor(Shape shape, unsigned seed) {
  return tensor(random_values<T>(Spec{dtype_of<T>(), shape}.size(), seed), shape);
}

// Hermitian positive definite: x xᴴ + n I, made by the ops themselves.
Expr positive_definite(Expr x) {
  const int r = x.rank();
  Axes batch;
  for (int i = 0; i + 2 < r; ++i) batch.push_back(i);
  const Expr xh = is_complex(x.dtype()) ? conjugate(x) : x;
  return dot(x, {r - 1}, batch, xh, {r - 1}, batch) + eye(x.spec()) * static_cast<double>(x.shape()[r - 1]);
}

template <typename T>
double tolerance() {
  return std::is_same_v<T, float> || std::is_same_v<T, complex64> ? 2e-4 : 1e-10;
}

#define EXPECT_CLOSE(found, want, tol, what)                          \
  EXPECT_LE(std::abs((found) - (want)), (tol) * (1 + std::abs(want))) \
      << what << ": " << (found) << " vs " << (want)

template <typename T>
class LinAlg : public ::testing::Test {};
using LapackTypes = ::testing::Types<float, double, complex64, complex128>;
TYPED_TEST_SUITE(LinAlg, LapackTypes);

TYPED_TEST(LinAlg, CholeskyOfPositiveDefiniteBatch) {
  using T = TypeParam;
  const std::vector<Tensor> out =
      run([](Expr x) { return tuple(positive_definite(x), cholesky(positive_definite(x))); },
          {random_tensor<T>(Shape{64, 12, 12}, 1)});
  const Batch<T> a = batch_of<T>(out[0]), l = batch_of<T>(out[1]);
  for (int64_t k = 0; k < a.count; ++k)
    for (int64_t i = 0; i < a.n; ++i)
      for (int64_t j = 0; j < a.n; ++j) {
        if (j > i) { ASSERT_EQ(l.at(k, i, j), T(0)) << "l is lower triangular"; }
        EXPECT_CLOSE(product(l, l, k, i, j, true), a.at(k, i, j), tolerance<T>(), "l lᴴ = a at " << k);
      }
}

TYPED_TEST(LinAlg, QrReducedAndCompleteFactorA) {
  using T = TypeParam;
  for (const auto& [shape, mode] :
       {std::pair{Shape{40, 7, 5}, QrMode::Reduced}, std::pair{Shape{40, 7, 5}, QrMode::Complete},
        std::pair{Shape{3, 4, 6}, QrMode::Reduced}, std::pair{Shape{3, 4, 6}, QrMode::Complete}}) {
    const Tensor x = random_tensor<T>(shape, 2);
    const std::vector<Tensor> out = run(
        [mode](Expr a) {
          const Qr f = qr(a, {.mode = mode});
          return tuple(f.q, f.r);
        },
        {x});
    const Batch<T> a = batch_of<T>(x), q = batch_of<T>(out[0]), r = batch_of<T>(out[1]);
    const std::string what = shape.str() + (mode == QrMode::Complete ? " complete" : " reduced");
    for (int64_t k = 0; k < a.count; ++k) {
      for (int64_t i = 0; i < r.n; ++i)
        for (int64_t j = 0; j < i && j < r.m; ++j)
          ASSERT_EQ(r.at(k, i, j), T(0)) << what << ": r is upper triangular";
      for (int64_t i = 0; i < a.n; ++i)
        for (int64_t j = 0; j < a.m; ++j)
          EXPECT_CLOSE(product(q, r, k, i, j), a.at(k, i, j), tolerance<T>(), what << " q r = a");
      for (int64_t i = 0; i < q.m; ++i)
        for (int64_t j = 0; j < q.m; ++j) {
          T s = 0;
          for (int64_t t = 0; t < q.n; ++t) s += conj_of(q.at(k, t, i)) * q.at(k, t, j);
          EXPECT_CLOSE(s, T(i == j ? 1 : 0), tolerance<T>(), what << " qᴴ q = I");
        }
    }
  }
}

TYPED_TEST(LinAlg, LuFactorsAWithAPermutation) {
  using T = TypeParam;
  const Tensor x = random_tensor<T>(Shape{50, 9, 9}, 3);
  const std::vector<Tensor> out = run(
      [](Expr a) {
        const Lu f = lu(a);
        return tuple(f.p, f.l, f.u);
      },
      {x});
  const Batch<T> a = batch_of<T>(x), l = batch_of<T>(out[1]), u = batch_of<T>(out[2]);
  const Batch<int64_t> p = batch_of<int64_t>(out[0]);
  for (int64_t k = 0; k < a.count; ++k) {
    for (int64_t i = 0; i < a.n; ++i) {
      int64_t ones = 0;
      for (int64_t j = 0; j < a.n; ++j) ones += p.at(k, i, j);
      ASSERT_EQ(ones, 1) << "p is a permutation matrix";
      ASSERT_EQ(l.at(k, i, i), T(1)) << "l has a unit diagonal";
      for (int64_t j = i + 1; j < a.n; ++j) ASSERT_EQ(l.at(k, i, j), T(0)) << "l is lower triangular";
      for (int64_t j = 0; j < i; ++j) ASSERT_EQ(u.at(k, i, j), T(0)) << "u is upper triangular";
    }
    for (int64_t i = 0; i < a.n; ++i)
      for (int64_t j = 0; j < a.n; ++j) {
        T s = 0;
        for (int64_t t = 0; t < a.n; ++t)
          s += static_cast<T>(static_cast<double>(p.at(k, i, t))) * product(l, u, k, t, j);
        EXPECT_CLOSE(s, a.at(k, i, j), tolerance<T>(), "p l u = a");
      }
  }
}

TYPED_TEST(LinAlg, EighDiagonalisesAHermitianBatch) {
  using T = TypeParam;
  using R = decltype(std::abs(T{}));
  const std::vector<Tensor> out = run(
      [](Expr x) {
        const Expr a = positive_definite(x) - eye(x.spec()) * 10.0;
        const Eigh e = eigh(a);
        return tuple(a, e.eigenvalues, e.eigenvectors);
      },
      {random_tensor<T>(Shape{30, 10, 10}, 4)});
  const Batch<T> a = batch_of<T>(out[0]), v = batch_of<T>(out[2]);
  const std::vector<R> w = out[1].to_vector<R>();
  for (int64_t k = 0; k < a.count; ++k)
    for (int64_t i = 0; i < a.n; ++i) {
      if (i > 0) {
        ASSERT_LE(w[static_cast<size_t>(k * a.n + i - 1)], w[static_cast<size_t>(k * a.n + i)])
            << "ascending";
      }
      for (int64_t j = 0; j < a.n; ++j) {
        const T wj = static_cast<T>(w[static_cast<size_t>(k * a.n + j)]);
        EXPECT_CLOSE(product(a, v, k, i, j), v.at(k, i, j) * wj, 10 * tolerance<T>(), "a v = v diag(w)");
        T s = 0;
        for (int64_t t = 0; t < a.n; ++t) s += conj_of(v.at(k, t, i)) * v.at(k, t, j);
        EXPECT_CLOSE(s, T(i == j ? 1 : 0), tolerance<T>(), "vᴴ v = I");
      }
    }
}

// LAPACK leaves each vector's sign (phase) to its arithmetic: in f32 it
// gave some columns negative where numpy's build gave them positive. sluice
// fixes it: the first component of at least half the column's largest
// magnitude is real and positive, exactly.
TYPED_TEST(LinAlg, EighFixesEachVectorsSignOrPhase) {
  using T = TypeParam;
  const std::vector<Tensor> out =
      run([](Expr x) { return eigh(positive_definite(x) - eye(x.spec()) * 10.0).eigenvectors; },
          {random_tensor<T>(Shape{30, 10, 10}, 5)});
  const Batch<T> v = batch_of<T>(out[0]);
  int negative_elsewhere = 0;  // columns whose largest component is negative: the rule is not "largest"
  for (int64_t k = 0; k < v.count; ++k)
    for (int64_t j = 0; j < v.n; ++j) {
      double largest = 0;
      for (int64_t i = 0; i < v.n; ++i)
        largest = std::max(largest, static_cast<double>(std::abs(v.at(k, i, j))));
      int64_t first = 0;
      while (static_cast<double>(std::abs(v.at(k, first, j))) < largest / 2) ++first;
      const T chosen = v.at(k, first, j);
      ASSERT_GT(std::real(chosen), 0) << "matrix " << k << ", vector " << j << ", component " << first;
      ASSERT_EQ(std::imag(chosen), 0) << "matrix " << k << ", vector " << j << ", component " << first;
      for (int64_t i = first + 1; i < v.n; ++i)
        if (static_cast<double>(std::abs(v.at(k, i, j))) == largest && std::real(v.at(k, i, j)) < 0)
          ++negative_elsewhere;
    }
  EXPECT_GT(negative_elsewhere, 0) << "no vector tells the first half-largest component from the largest";
}

TYPED_TEST(LinAlg, SolveAndTriangularSolveSatisfyTheirEquations) {
  using T = TypeParam;
  const Tensor a = random_tensor<T>(Shape{20, 6, 6}, 5), b = random_tensor<T>(Shape{20, 6, 3}, 6);
  const Batch<T> bb = batch_of<T>(b);
  {
    const Tensor x = run1([](Expr m, Expr y) { return solve(m + eye(m.spec()) * 6.0, y); }, {a, b});
    const Tensor am = run1([](Expr m) { return m + eye(m.spec()) * 6.0; }, {a});
    const Batch<T> ab = batch_of<T>(am), xb = batch_of<T>(x);
    for (int64_t k = 0; k < ab.count; ++k)
      for (int64_t i = 0; i < 6; ++i)
        for (int64_t j = 0; j < 3; ++j)
          EXPECT_CLOSE(product(ab, xb, k, i, j), bb.at(k, i, j), tolerance<T>(), "a x = b");
  }
  // Every side, triangle and transform against op(a) x = b (x op(a) = b with bᵀ's shape on the right).
  for (const bool left : {true, false})
    for (const bool lower : {true, false})
      for (const TriangularTransform t : {TriangularTransform::None, TriangularTransform::Transpose,
                                          TriangularTransform::ConjugateTranspose}) {
        const Tensor rhs = left ? b : random_tensor<T>(Shape{20, 3, 6}, 7);
        const std::vector<Tensor> out = run(
            [&](Expr m, Expr y) {
              const Expr tri = m + eye(m.spec()) * 6.0;
              return tuple(tri,
                           triangular_solve(tri, y, {.left_side = left, .lower = lower, .transform_a = t}));
            },
            {a, rhs});
        const Batch<T> ab = batch_of<T>(out[0]), xb = batch_of<T>(out[1]), yb = batch_of<T>(rhs);
        // op(a)[i][j], with the triangle not read taken as zero.
        auto op_a = [&](int64_t k, int64_t i, int64_t j) {
          const int64_t r = t == TriangularTransform::None ? i : j,
                        c = t == TriangularTransform::None ? j : i;
          if (lower ? c > r : c < r) return T(0);
          return t == TriangularTransform::ConjugateTranspose ? conj_of(ab.at(k, r, c)) : ab.at(k, r, c);
        };
        for (int64_t k = 0; k < ab.count; ++k)
          for (int64_t i = 0; i < yb.n; ++i)
            for (int64_t j = 0; j < yb.m; ++j) {
              T s = 0;
              for (int64_t q = 0; q < 6; ++q)
                s += left ? op_a(k, i, q) * xb.at(k, q, j) : xb.at(k, i, q) * op_a(k, q, j);
              EXPECT_CLOSE(s, yb.at(k, i, j), tolerance<T>(),
                           "triangular_solve left " << left << " lower " << lower << " transform "
                                                    << static_cast<int>(t));
            }
      }
}

// ---- what LAPACK cannot do gives NaNs for that matrix alone (ops.h)
TEST(LinAlgFailures, NotPositiveDefiniteAndSingularMatricesGiveNansForThemAlone) {
  const Tensor a = tensor(std::vector<double>{4, 2, 2, 3, /**/ 1, 2, 2, 1}, Shape{2, 2, 2});
  const std::vector<double> l = run1([](Expr x) { return cholesky(x); }, {a}).to_vector<double>();
  EXPECT_DOUBLE_EQ(l[0], 2.0);
  EXPECT_DOUBLE_EQ(l[3], std::sqrt(2.0));
  for (size_t i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(l[i])) << "the indefinite matrix's factor is all NaN";

  const Tensor s = tensor(std::vector<double>{2, 0, 0, 4, /**/ 1, 2, 2, 4}, Shape{2, 2, 2});
  const std::vector<double> x = run1([](Expr m, Expr y) { return solve(m, y); },
                                     {s, tensor(std::vector<double>{2, 4, 1, 1}, Shape{2, 2})})
                                    .to_vector<double>();
  EXPECT_EQ(x[0], 1.0);
  EXPECT_EQ(x[1], 1.0);
  EXPECT_TRUE(std::isnan(x[2]) && std::isnan(x[3])) << "a singular a gives NaNs";

  // lu of a singular matrix still factors it; eigh of NaNs gives NaNs.
  const std::vector<Tensor> f = run(
      [](Expr m) {
        const Lu d = lu(m);
        return tuple(d.l, d.u);
      },
      {s});
  const std::vector<double> u = f[1].to_vector<double>();
  EXPECT_EQ(u[7], 0.0) << "the zero pivot of the singular matrix";
  const double nan = std::nan("");
  const std::vector<Tensor> e = run(
      [](Expr m) {
        const Eigh d = eigh(m);
        return tuple(d.eigenvalues, d.eigenvectors);
      },
      {tensor(std::vector<double>{1, nan, nan, 1}, Shape{2, 2})});
  for (double w : e[0].to_vector<double>()) EXPECT_TRUE(std::isnan(w));
}

// ---- the mechanism of several results
TEST(LinAlgResults, UnreadResultsStillGetMemoryAndScansRunThemStepByStep) {
  const Tensor x = random_tensor<double>(Shape{5, 4, 4}, 8);
  // Only u of lu, only r of qr: the other results are written to scratch.
  const std::vector<Tensor> parts = run([](Expr a) { return tuple(lu(a).u, qr(a).r); }, {x});
  const std::vector<Tensor> whole = run(
      [](Expr a) {
        const Lu f = lu(a);
        const Qr g = qr(a);
        return tuple(f.u, g.r, f.p, f.l, g.q);
      },
      {x});
  EXPECT_EQ(parts[0].to_vector<double>(), whole[0].to_vector<double>());
  EXPECT_EQ(parts[1].to_vector<double>(), whole[1].to_vector<double>());
  // A scan whose body has a node of several results, over the same matrices.
  const Tensor summed = run1(
      [](Expr xs) {
        return scan([](Expr c, Expr a) { return c + eigh(a + transpose(a)).eigenvalues; },
                    broadcast(constant(0.0, DType::F64), Shape{4}), xs)[0];
      },
      {x});
  const std::vector<double> direct =
      run1(
          [](Expr xs) {
            return sum(eigh(xs + transpose(xs, {0, 2, 1})).eigenvalues, {.axes = {0}});
          },
          {x})
          .to_vector<double>();
  const std::vector<double> looped = summed.to_vector<double>();
  for (size_t i = 0; i < direct.size(); ++i) EXPECT_NEAR(looped[i], direct[i], 1e-10);
}

}  // namespace
}  // namespace sluice
