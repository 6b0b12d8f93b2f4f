// grad and value_and_grad (ops/autodiff.h): closed forms, JAX's choices at
// ties, stop_gradient, ops that pass no gradient, and the errors. The
// catalogue-wide finite-difference checks are in grad_fd_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <sluice/ops/ops.h>
#include "tests/ops/host_run.h"
#include "tests/ops/ops_test_util.h"

namespace sluice {
namespace {

using testing::HostFunction;
using testing::Values;
using testing::expect_values;

TEST(Grad, SumOfSquaresIsTwiceX) {
  const Values x{-1.5, 0.0, 0.25, 3.0};
  for (auto square : {+[](Expr v) { return v * v; }, +[](Expr v) { return pow(v, weak_scalar(2.0)); }}) {
    HostFunction g(grad({f64({4})}, [&](Expr v) { return sum(square(v)); }));
    expect_values(g({x})[0], {-3.0, 0.0, 0.5, 6.0}, 1e-12, "d/dx sum(x^2)");
  }
}

TEST(Grad, WrtSelectsAndOrdersParameters) {
  // f(a, b, c) = sum(a * b) + 3 c: d/dc = 3, d/da = b.
  Function f =
      trace({f64({2}), f64({2}), f64({})}, [](Expr a, Expr b, Expr c) { return sum(a * b) + 3.0 * c; });
  HostFunction g(grad(f, {2, 0}));
  std::vector<Values> out = g({{1, 2}, {5, 7}, {0.5}});
  ASSERT_EQ(out.size(), 2u);
  expect_values(out[0], {3.0}, 1e-12, "d/dc");
  expect_values(out[1], {5.0, 7.0}, 1e-12, "d/da");
}

TEST(Grad, ValueAndGradReturnsOutputsThenGradients) {
  Function f = trace({f64({3})}, [](Expr x) { return tuple(sum(exp(x)), x * 2.0); });
  Function vg = value_and_grad(f, {0});
  ASSERT_EQ(vg.outputs().size(), 3u);
  HostFunction run(vg);
  const Values x{0.0, 1.0, -1.0};
  std::vector<Values> out = run({x});
  expect_values(out[0], {1.0 + std::exp(1.0) + std::exp(-1.0)}, 1e-12, "value");
  expect_values(out[1], {0.0, 2.0, -2.0}, 1e-12, "second output");
  expect_values(out[2], {1.0, std::exp(1.0), std::exp(-1.0)}, 1e-12, "gradient");
}

// Softmax regression: loss = -sum(y * log_softmax(x w)) / n, whose gradient
// in w is x^T (p - y) / n with p the softmax probabilities.
TEST(Grad, SoftmaxRegressionMatchesTheHandDerivedGradient) {
  constexpr int64_t n = 5, d = 3, k = 4;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  Values x(n * d), w(d * k), y(n * k, 0.0);
  for (double& v : x) v = normal(rng);
  for (double& v : w) v = normal(rng);
  for (int64_t i = 0; i < n; ++i) y[static_cast<size_t>(i * k + (i * 7) % k)] = 1.0;

  auto loss = [](Expr xs, Expr ws, Expr ys) {
    Expr logits = dot(xs, ws);
    Expr shifted = logits - reduce_max(logits, {.axes = {1}, .keep_axes = true});
    Expr log_p = shifted - log(sum(exp(shifted), {.axes = {1}, .keep_axes = true}));
    return -sum(ys * log_p) / static_cast<double>(n);
  };
  HostFunction g(grad({f64({n, d}), f64({d, k}), f64({n, k})}, loss, {1}));

  Values expected(d * k, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> logits(k, 0.0);
    double top = -INFINITY, total = 0;
    for (int64_t c = 0; c < k; ++c) {
      for (int64_t j = 0; j < d; ++j)
        logits[static_cast<size_t>(c)] +=
            x[static_cast<size_t>(i * d + j)] * w[static_cast<size_t>(j * k + c)];
      top = std::max(top, logits[static_cast<size_t>(c)]);
    }
    for (double& l : logits) total += std::exp(l - top);
    for (int64_t c = 0; c < k; ++c) {
      const double p = std::exp(logits[static_cast<size_t>(c)] - top) / total;
      for (int64_t j = 0; j < d; ++j)
        expected[static_cast<size_t>(j * k + c)] +=
            x[static_cast<size_t>(i * d + j)] * (p - y[static_cast<size_t>(i * k + c)]) / n;
    }
  }
  expect_values(g({x, w, y})[0], expected, 1e-12, "d loss / d w");
}

// JAX splits ties: max(a, a) gives each side half; reduce_max shares the
// cotangent among the elements equal to the maximum.
TEST(Grad, TiesAreSplitAsJaxDoes) {
  HostFunction pair(grad({f64({2}), f64({2})}, [](Expr a, Expr b) { return sum(max(a, b) * 4.0); }, {0, 1}));
  std::vector<Values> out = pair({{1.0, 2.0}, {1.0, 0.0}});
  expect_values(out[0], {2.0, 4.0}, 1e-12, "d/da max(a, b)");
  expect_values(out[1], {2.0, 0.0}, 1e-12, "d/db max(a, b)");

  HostFunction reduce(grad({f64({4})}, [](Expr x) { return reduce_max(x) * 6.0; }));
  expect_values(reduce({{3.0, 1.0, 3.0, 3.0}})[0], {2.0, 0.0, 2.0, 2.0}, 1e-12, "d/dx reduce_max");
}

// The slope of a product in one element is the product of the others, also
// where elements are zero (where y / x would divide by zero).
TEST(Grad, ProductThroughZeros) {
  HostFunction g(grad({f64({3})}, [](Expr x) { return product(x); }));
  expect_values(g({{2.0, 5.0, 3.0}})[0], {15.0, 6.0, 10.0}, 1e-12, "no zero");
  expect_values(g({{2.0, 0.0, 3.0}})[0], {0.0, 6.0, 0.0}, 1e-12, "one zero");
  expect_values(g({{0.0, 0.0, 3.0}})[0], {0.0, 0.0, 0.0}, 1e-12, "two zeros");
}

// Running and windowed products through zeros: each element's slope is the
// product of the others in each group that holds it.
TEST(Grad, RunningAndWindowedProductsThroughZeros) {
  HostFunction running(grad({f64({4})}, [](Expr x) { return sum(cumulative_product(x)); }));
  // y = [a, ab, abc, abcd]; dL/da = 1 + b + bc + bcd, dL/db = a + ac + acd, ...
  expect_values(running({{2.0, 3.0, 4.0, 5.0}})[0], {1 + 3 + 12 + 60.0, 2 + 8 + 40.0, 6 + 30.0, 24.0}, 1e-12,
                "no zero");
  expect_values(running({{2.0, 0.0, 4.0, 5.0}})[0], {1.0, 2 + 8 + 40.0, 0.0, 0.0}, 1e-12, "one zero");
  expect_values(running({{0.0, 3.0, 0.0, 5.0}})[0], {1 + 3.0, 0.0, 0.0, 0.0}, 1e-12, "two zeros");
  HostFunction reversed(
      grad({f64({3})}, [](Expr x) { return sum(cumulative_product(x, {.reverse = true})); }));
  // y = [abc, bc, c]
  expect_values(reversed({{2.0, 0.0, 4.0}})[0], {0.0, 2 * 4 + 4.0, 1.0}, 1e-12, "reverse, one zero");

  HostFunction windowed(grad({f64({4})}, [](Expr x) {
    return sum(window_product(x, {2}, {.padding = {{1, 0}}}));
  }));
  // windows [a], [a b], [b c], [c d]
  expect_values(windowed({{2.0, 0.0, 3.0, 5.0}})[0], {1.0, 2 + 3.0, 5.0, 3.0}, 1e-12, "window, one zero");
}

// window_max and cumulative_max give a cotangent to the first element that
// reached the extremum (JAX's select_and_scatter_add for windows), not a
// share to each tie.
TEST(Grad, WindowAndRunningExtremaGoToTheFirstTie) {
  HostFunction window(grad({f64({5})}, [](Expr x) { return sum(window_max(x, {3}) * 2.0); }));
  // windows [3 1 3], [1 3 3], [3 3 0]: their firsts are 0, 2, 2.
  expect_values(window({{3.0, 1.0, 3.0, 3.0, 0.0}})[0], {2.0, 0.0, 4.0, 0.0, 0.0}, 1e-12, "window_max");

  HostFunction running(grad({f64({5})}, [](Expr x) { return sum(cumulative_max(x)); }));
  // y = [1 4 4 4 5]: 4 reached first at 1, kept through the tie at 3.
  expect_values(running({{1.0, 4.0, 2.0, 4.0, 5.0}})[0], {1.0, 3.0, 0.0, 0.0, 1.0}, 1e-12, "cumulative_max");
  HostFunction backwards(grad({f64({4})}, [](Expr x) { return sum(cumulative_min(x, {.reverse = true})); }));
  // y = [1 2 2 3] from the end: 3 at 3, 2 at 2 (the tie at 1 comes later), 1 at 0.
  expect_values(backwards({{1.0, 2.0, 2.0, 3.0}})[0], {1.0, 0.0, 2.0, 1.0}, 1e-12, "reverse cumulative_min");
}

// JAX's convention for a real loss of a complex z: dL/dx - i dL/dy, so
// |z|^2 at 3 + 4i has gradient 6 - 8i, however |z|^2 is written.
TEST(Grad, ComplexParameterFollowsJax) {
  using Loss = Expr (*)(Expr);
  for (Loss loss :
       {+[](Expr z) { return real(z) * real(z) + imag(z) * imag(z); },
        +[](Expr z) { return abs(z) * abs(z); }, +[](Expr z) { return real(conjugate(z) * z); }}) {
    Tensor out = compile(grad({c128({})}, loss)).run({scalar(complex128(3.0, 4.0))})[0];
    complex128 g;
    out.copy_to_host(&g);
    EXPECT_NEAR(g.real(), 6.0, 1e-12);
    EXPECT_NEAR(g.imag(), -8.0, 1e-12);
  }
}

TEST(Grad, StopGradientPassesNone) {
  // d/dx sum(x * stop_gradient(x)) = x, not 2x; the mark compiles away.
  Function f = trace({f64({3})}, [](Expr x) { return sum(x * stop_gradient(x)); });
  HostFunction g(grad(f));
  expect_values(g({{1.0, -2.0, 0.5}})[0], {1.0, -2.0, 0.5}, 1e-12, "gradient");
  expect_values(HostFunction(f)({{1.0, -2.0, 0.5}})[0], {5.25}, 1e-12, "value");
}

TEST(Grad, PiecewiseConstantAndIntegerOpsPassNone) {
  // floor, sign, comparisons and a trip through s32 contribute nothing.
  HostFunction g(grad({f64({3})}, [](Expr x) {
    Expr steps =
        floor(x) + sign(x) + as_type(x > 0.0, DType::F64) + as_type(as_type(x * 3.0, DType::S32), DType::F64);
    return sum(steps * 2.0 + x);
  }));
  expect_values(g({{0.3, -1.7, 2.2}})[0], {1.0, 1.0, 1.0}, 1e-12, "gradient");
}

TEST(Grad, UnusedParameterGetsZeros) {
  HostFunction g(grad({f64({2}), f64({2, 2})}, [](Expr a, Expr) { return sum(a); }, {1}));
  std::vector<Values> out = g({{1.0, 2.0}, {5, 6, 7, 8}});
  ASSERT_EQ(out.size(), 1u);
  expect_values(out[0], {0, 0, 0, 0}, 0, "d/db of a function that ignores b");
}

TEST(Grad, IntegerParameterIsATypeError) {
  Function f = trace({f64({2}), s32({2})}, [](Expr a, Expr b) { return sum(a * b); });
  EXPECT_THROW_WITH(grad(f, {0, 1}), TypeError, "grad", "wrt[1] (parameter 1)", "s32[2]");
  Function p = trace({pred({2})}, [](Expr b) { return sum(as_type(b, DType::F32)); });
  EXPECT_THROW_WITH(value_and_grad(p, {0}), TypeError, "value_and_grad", "parameter 0", "pred[2]");
}

TEST(Grad, ThroughAWhileLoopIsATypeErrorNamingTheLoop) {
  Function f = trace({f64({2})}, [](Expr a) {
    Tuple r = while_loop([](Tuple c) { return less(c[1], int64_t{3}); },
                         [](Tuple c) { return tuple(c[0] * 2.0, c[1] + 1); }, tuple(a, constant(0.0, DType::S64)));
    return sum(r[0]);
  });
  EXPECT_THROW_WITH(grad(f), TypeError, "grad", "while_loop with carry (f64[2], s64)", "scan, fori_loop");
  // An integer-only loop beside the path is no obstacle.
  Function g = trace({f64({2})}, [](Expr a) {
    Expr n = while_loop([](Expr i) { return i < 3; }, [](Expr i) { return i + 1; }, constant(0.0, DType::S64));
    return sum(a * as_type(n, DType::F64));
  });
  std::vector<Values> out = HostFunction(grad(g))({{1.0, 2.0}});
  expect_values(out[0], {3, 3}, 0, "d/da of sum(a * 3)");
}

TEST(Grad, ThroughAScanOfZeroStepsIsTheIdentityOnTheCarry) {
  Function f = trace({f64({2}), f64({0, 2})}, [](Expr c0, Expr xs) {
    return sum(scan([](Expr c, Expr x) { return c * x; }, c0, xs)[0] * 3.0);
  });
  std::vector<Values> out = HostFunction(grad(f, {0, 1}))({{1.0, 2.0}, {}});
  expect_values(out[0], {3, 3}, 0, "d/dc0");
  EXPECT_TRUE(out[1].empty());
}

TEST(Grad, OutputMustBeARealFloatingScalar) {
  Function vector = trace({f64({2})}, [](Expr a) { return a * 2.0; });
  EXPECT_THROW_WITH(grad(vector), ShapeError, "grad", "output 0", "a scalar", "f64[2]");
  Function integer = trace({f64({2})}, [](Expr a) { return sum(as_type(a, DType::S32)); });
  EXPECT_THROW_WITH(grad(integer), TypeError, "grad", "output 0", "real floating", "s64");
  Function complex = trace({f64({2})}, [](Expr a) { return sum(as_type(a, DType::C64)); });
  EXPECT_THROW_WITH(grad(complex), TypeError, "grad", "output 0", "c64");
  Function scalar = trace({f64({2})}, [](Expr a) { return sum(a); });
  EXPECT_THROW_WITH(grad(scalar, {3}), Error, "grad", "wrt[0]", "found 3");
}

}  // namespace
}  // namespace sluice
