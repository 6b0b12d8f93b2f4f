// Model helpers (ops/nn.h) against their closed forms computed here in
// double, at ordinary values and at the extremes where a naive form
// overflows or loses its small terms; and the gradients the losses are used
// for (softmax cross-entropy: softmax - labels).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include <sluice/ops/nn.h>
#include "tests/ops/host_run.h"
#include "tests/ops/ops_test_util.h"

namespace sluice {
namespace {

using testing::HostFunction;
using testing::Values;
using testing::expect_values;

template <typename F>
Values run1(const Shape& shape, const Values& x, F f) {
  return HostFunction(trace({Spec{DType::F64, shape}}, f))({x})[0];
}

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Nn, LogSumExpIsStableAndReducesTheAxesAsked) {
  const Values x{1000.0, 1000.0, -2.0, 3.0, 0.5, -kInf};
  expect_values(
      run1(Shape({2, 3}), x, [](Expr v) { return logsumexp(v, {.axes = {1}}); }),
      {std::log(2 * std::exp(0.0) + std::exp(-1002.0)) + 1000.0, std::log(std::exp(3.0) + std::exp(0.5))},
      1e-14, "logsumexp over axis 1");
  expect_values(run1(Shape({2}), {-kInf, -kInf}, [](Expr v) { return logsumexp(v); }), {-kInf}, 0,
                "logsumexp of all -inf");
  expect_values(
      run1(Shape({2, 1}), {1.0, 2.0}, [](Expr v) { return logsumexp(v, {.axes = {-1}, .keep_axes = true}); }),
      {1.0, 2.0}, 1e-15, "keep_axes");
}

TEST(Nn, SoftmaxAndLogSoftmaxAlongAnAxis) {
  const Values x{1.0, 2.0, 3.0, 800.0, 800.0, 0.0};
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  const Values p{std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z, 0.5, 0.5, std::exp(-800.0) / 2};
  expect_values(run1(Shape({2, 3}), x, [](Expr v) { return softmax(v); }), p, 1e-14, "softmax");
  Values log_p;
  for (double v : p) log_p.push_back(std::log(v));
  log_p.back() = -800.0 - std::log(2.0);  // exp(-800) / 2 underflows; its log does not
  expect_values(run1(Shape({2, 3}), x, [](Expr v) { return log_softmax(v, 1); }), log_p, 1e-14,
                "log_softmax");
  // along axis 0: columns
  expect_values(run1(Shape({2, 2}), {0.0, 1.0, 0.0, 3.0}, [](Expr v) { return softmax(v, 0); }),
                {0.5, 1 / (1 + std::exp(2.0)), 0.5, 1 / (1 + std::exp(-2.0))}, 1e-14, "softmax axis 0");
}

TEST(Nn, OneHot) {
  const std::vector<int32_t> idx{2, 0, 7};
  const Values out = [&] {
    Tensor t = compile(trace({s32({3})}, [](Expr i) {
                 return one_hot(i, 4, DType::F64);
               })).run({tensor(idx, Shape({3}))})[0];
    Values v(static_cast<size_t>(t.size()));
    t.copy_to_host(v.data());
    return v;
  }();
  expect_values(out, {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0}, 0, "one_hot (7 is out of range: zeros)");
  EXPECT_THROW_WITH(one_hot(testing::arg(f32({3})), 4), TypeError, "one_hot", "indices", "f32");
}

TEST(Nn, MeanAndVariance) {
  const Values x{1.0, 2.0, 3.0, 4.0, 6.0, 8.0};
  expect_values(run1(Shape({2, 3}), x, [](Expr v) { return mean(v); }), {4.0}, 1e-15, "mean");
  expect_values(run1(Shape({2, 3}), x, [](Expr v) { return mean(v, {.axes = {-1}}); }), {2.0, 6.0}, 1e-15,
                "mean of rows");
  expect_values(run1(Shape({2, 3}), x, [](Expr v) { return variance(v, {.axes = {1}}); }),
                {2.0 / 3.0, 8.0 / 3.0}, 1e-15, "variance of rows");
  expect_values(run1(Shape({2, 3}), x, [](Expr v) { return variance(v); }), {(9 + 4 + 1 + 0 + 4 + 16) / 6.0},
                1e-15, "variance");
  EXPECT_EQ(mean(testing::arg(s32({4}))).dtype(), DType::F32) << "integers average in f32";
}

TEST(Nn, Activations) {
  const Values x{-1000.0, -1.5, 0.0, 0.5, 1000.0};
  Values relu_x, gelu_x, gelu_tanh_x, softplus_x;
  for (double v : x) {
    relu_x.push_back(std::max(v, 0.0));
    gelu_x.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    gelu_tanh_x.push_back(0.5 * v *
                          (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v))));
    softplus_x.push_back(std::max(v, 0.0) + std::log1p(std::exp(-std::abs(v))));
  }
  const Shape s({5});
  expect_values(run1(s, x, [](Expr v) { return relu(v); }), relu_x, 0, "relu");
  expect_values(run1(s, x, [](Expr v) { return gelu(v); }), gelu_x, 1e-15, "gelu");
  expect_values(run1(s, x, [](Expr v) { return gelu(v, GeluForm::Tanh); }), gelu_tanh_x, 1e-15, "gelu tanh");
  expect_values(run1(s, x, [](Expr v) { return softplus(v); }), softplus_x, 1e-15, "softplus");
  EXPECT_EQ(softplus_x[4], 1000.0) << "the reference itself: log(1 + e^1000) is 1000";
  // relu's gradient at 0 is 0, as jax.nn.relu's
  expect_values(HostFunction(grad({f64({3})}, [](Expr v) { return sum(relu(v)); }))({{-1.0, 0.0, 2.0}})[0],
                {0.0, 0.0, 1.0}, 0, "d relu");
}

TEST(Nn, SigmoidCrossEntropyIsStable) {
  const Values logits{-800.0, -2.0, 0.0, 3.0, 800.0}, labels{0.0, 1.0, 0.5, 0.0, 1.0};
  Values expected;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double x = logits[i], z = labels[i];
    // -z log s(x) - (1 - z) log(1 - s(x)), with log s(x) = -softplus(-x)
    auto softplus = [](double v) { return std::max(v, 0.0) + std::log1p(std::exp(-std::abs(v))); };
    expected.push_back(z * softplus(-x) + (1 - z) * softplus(x));
  }
  Function f = trace({f64({5}), f64({5})}, [](Expr x, Expr z) { return sigmoid_cross_entropy(x, z); });
  expect_values(HostFunction(f)({logits, labels})[0], expected, 1e-15, "sigmoid_cross_entropy");
}

// d/dx sigmoid_cross_entropy(x, z) = sigmoid(x) - z and softplus' =
// sigmoid everywhere, 0 included: the logits of zero-initialised weights.
TEST(Nn, SigmoidCrossEntropyAndSoftplusGradientsHoldAtZero) {
  const Values logits{0.0, 0.0, 1.5, -2.0, 30.0}, labels{1.0, 0.0, 0.3, 1.0, 0.0};
  Values want_ce, want_softplus;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double s = 1 / (1 + std::exp(-logits[i]));
    want_ce.push_back(s - labels[i]);
    want_softplus.push_back(s);
  }
  Function ce = grad({f64({5}), f64({5})}, [](Expr x, Expr z) { return sum(sigmoid_cross_entropy(x, z)); });
  expect_values(HostFunction(ce)({logits, labels})[0], want_ce, 1e-15, "d sigmoid_cross_entropy / d logits");
  Function sp = grad({f64({5})}, [](Expr x) { return sum(softplus(x)); });
  expect_values(HostFunction(sp)({logits})[0], want_softplus, 1e-15, "d softplus / dx");
}

TEST(Nn, SoftmaxCrossEntropyAndItsGradient) {
  const Values logits{2.0, -1.0, 0.5, 900.0, 0.0, -900.0}, labels{0.0, 1.0, 0.0, 0.2, 0.8, 0.0};
  Function f =
      trace({f64({2, 3}), f64({2, 3})}, [](Expr x, Expr y) { return sum(softmax_cross_entropy(x, y)); });
  const double z = std::exp(2.0) + std::exp(-1.0) + std::exp(0.5);
  const Values p{std::exp(2.0) / z, std::exp(-1.0) / z, std::exp(0.5) / z, 1.0, std::exp(-900.0), 0.0};
  const double row0 = -(-1.0 - std::log(z)), row1 = -(0.2 * 0.0 + 0.8 * -900.0);
  expect_values(HostFunction(f)({logits, labels})[0], {row0 + row1}, 1e-14, "loss");
  Values softmax_minus_labels;
  for (size_t i = 0; i < p.size(); ++i) softmax_minus_labels.push_back(p[i] - labels[i]);
  expect_values(HostFunction(grad(f, {0}))({logits, labels})[0], softmax_minus_labels, 1e-14,
                "d loss / d logits");
}

}  // namespace
}  // namespace sluice
