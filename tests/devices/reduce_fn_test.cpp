// reduce and window_reduce with a function of the user's own, run: the
// built-in ones give the built-in reductions' bits; any other runs as written
// (folded pairwise, odd counts carried along, reduced axes first or last) and
// is checked against the same reduction computed here in double precision.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <sluice/ops/ops.h>
#include "random_inputs.h"
#include "run_traced.h"

namespace sluice {
namespace {

using testing::run1;

Expr logaddexp(Expr a, Expr e) { return max(a, e) + log1p(exp(-abs(a - e))); }

TEST(ReduceFnRun, TheBuiltInFunctionsGiveTheBuiltInBits) {
  const Tensor x = tensor(test::uniform_values<float>(3 * 5000, -4, 4, 1), Shape{3, 5000});
  const double inf = std::numeric_limits<double>::infinity();
  for (const ReduceOptions& o : {ReduceOptions{}, ReduceOptions{.axes = {1}}, ReduceOptions{.axes = {0}}}) {
    EXPECT_EQ(run1(
                  [&](Expr v) {
                    return reduce(
                        v, 0.0, [](Expr a, Expr e) { return a + e; }, o);
                  },
                  {x})
                  .to_vector<float>(),
              run1([&](Expr v) { return sum(v, o); }, {x}).to_vector<float>());
    EXPECT_EQ(run1(
                  [&](Expr v) {
                    return reduce(
                        v, -inf, [](Expr a, Expr e) { return max(e, a); }, o);
                  },
                  {x})
                  .to_vector<float>(),
              run1([&](Expr v) { return reduce_max(v, o); }, {x}).to_vector<float>());
  }
  // A window: window_min's bits.
  const Tensor w = tensor(test::uniform_values<float>(40, -4, 4, 2), Shape{40});
  EXPECT_EQ(run1(
                [](Expr v) {
                  return window_reduce(v, INFINITY, [](Expr a, Expr e) { return min(a, e); }, {4},
                                       {.strides = {3}});
                },
                {w})
                .to_vector<float>(),
            run1([](Expr v) { return window_min(v, {4}, {.strides = {3}}); }, {w}).to_vector<float>());
}

// Rows k and columns m of a [k][m] reduced over its rows, for shapes that
// take every path: one row, a few, many, odd counts at some round of the
// fold, one column or thousands.
TEST(ReduceFnRun, AnyFunctionRunsAsWrittenOverEveryShape) {
  for (const auto& [k, m] : {std::pair<int64_t, int64_t>{1, 1},
                             {7, 1},
                             {4096, 1},
                             {4097, 1},
                             {20001, 1},
                             {9, 3},
                             {3001, 3},
                             {5, 700},
                             {37, 4096},
                             {2, 9000}}) {
    const std::vector<float> v = test::uniform_values<float>(k * m, -4, 4, static_cast<unsigned>(k + m));
    const Tensor x = tensor(v, Shape{k, m});
    const std::vector<float> got =
        run1([](Expr t) { return reduce(t, -INFINITY, logaddexp, {.axes = {0}}); }, {x}).to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (int64_t i = 0; i < k; ++i) s += std::exp(static_cast<double>(v[static_cast<size_t>(i * m + j)]));
      EXPECT_NEAR(got[static_cast<size_t>(j)], std::log(s), 2e-5 * (1 + std::abs(std::log(s))))
          << k << " rows, " << m << " columns, column " << j;
    }
  }
}

TEST(ReduceFnRun, AxesInTheMiddleInitAndNothingToReduce) {
  const std::vector<float> v = test::uniform_values<float>(2 * 50 * 3, -4, 4, 3);
  const Tensor x = tensor(v, Shape{2, 50, 3});
  const auto hypot = [](Expr a, Expr e) { return sqrt(a * a + e * e); };
  const Tensor r = run1([&](Expr t) { return reduce(t, 2.0, hypot, {.axes = {1}, .keep_axes = true}); }, {x});
  EXPECT_EQ(r.spec(), f32({2, 1, 3}));
  const std::vector<float> got = r.to_vector<float>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 3; ++c) {
      double s = 4;  // init, combined once: hypot(2, ...)
      for (int64_t i = 0; i < 50; ++i) {
        const double e = v[static_cast<size_t>((b * 50 + i) * 3 + c)];
        s += e * e;
      }
      EXPECT_NEAR(got[static_cast<size_t>(b * 3 + c)], std::sqrt(s), 1e-5 * std::sqrt(s));
    }
  // Nothing to reduce: init, as the built-in reductions give their identity.
  const Tensor empty = tensor(std::vector<float>{}, Shape{3, 0});
  EXPECT_EQ(run1([&](Expr t) { return reduce(t, 2.5, hypot, {.axes = {1}}); }, {empty}).to_vector<float>(),
            (std::vector<float>{2.5f, 2.5f, 2.5f}));
  // Integers: bitwise or.
  const Tensor bits = tensor(std::vector<int32_t>{1, 4, 16, 4, 64, 1}, Shape{6});
  EXPECT_EQ(run1([](Expr t) { return reduce(t, 0, [](Expr a, Expr e) { return a | e; }); }, {bits})
                .to_vector<int32_t>(),
            (std::vector<int32_t>{85}));
}

TEST(ReduceFnRun, HalfPrecisionAndComplexTensors) {
  // f16 and bf16: fn's ops compute in f32 and round to the half type each
  // time, as any chain of them does; a sum of 200 ones is exact in both.
  for (DType half : {DType::F16, DType::BF16}) {
    const Tensor x = run1([half](Expr v) { return as_type(v, half); },
                          {tensor(std::vector<float>(200, 1.0f), Shape{200})});
    const Tensor r = run1([](Expr v) { return reduce(v, 0.0, [](Expr a, Expr e) { return a - (-e); }); },
                          {x});  // add, not recognised
    EXPECT_EQ(r.spec(), (Spec{half, Shape{}}));
    EXPECT_EQ(run1([](Expr v) { return as_type(v, DType::F32); }, {r}).to_vector<float>(),
              (std::vector<float>{200}));
  }
  // Complex: the generic path's sum against the built-in one.
  std::vector<complex64> z;
  for (int i = 0; i < 300; ++i)
    z.emplace_back(0.5f * static_cast<float>(i % 7), -0.25f * static_cast<float>(i % 5));
  const Tensor zs = tensor(z, Shape{300});
  const complex64 generic =
      run1([](Expr v) { return reduce(v, 0.0, [](Expr a, Expr e) { return a - (-e); }); }, {zs})
          .to_vector<complex64>()[0];
  const complex64 built_in = run1([](Expr v) { return sum(v); }, {zs}).to_vector<complex64>()[0];
  EXPECT_EQ(generic, built_in) << "quarters and halves: every partial sum is exact";
}

TEST(ReduceFnRun, WindowsCombineFromInitInOrderAndPadWithInit) {
  // max(a, |e|) is not associative; a window's elements combine in order.
  const Tensor x = tensor(std::vector<float>{-5, 1, 2, -3, 0.5f, 4, -1}, Shape{7});
  const Tensor r = run1(
      [](Expr t) {
        return window_reduce(t, 0.5, [](Expr a, Expr e) { return max(a, abs(e)); }, {2},
                             {.strides = {2}, .padding = {{1, 0}}, .window_dilations = {2}});
      },
      {x});
  // Padded [0.5, -5, 1, 2, -3, 0.5, 4, -1]; windows read elements 2i and 2i + 2.
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{1, 3, 4}));
}

}  // namespace
}  // namespace sluice
