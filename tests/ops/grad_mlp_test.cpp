// The gradient of a whole model: a one-hidden-layer MLP's softmax
// cross-entropy by grad, against its backward pass derived by hand (the
// chain rule written out as ops: no autodiff involved), in f64.

#include <gtest/gtest.h>

#include <random>

#include <sluice/ops/autodiff.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/ops.h>
#include "tests/ops/host_run.h"

namespace sluice {
namespace {

constexpr int64_t kBatch = 6, kIn = 5, kHidden = 7, kClasses = 3;

// w1, b1, w2, b2, x, labels (one-hot)
std::vector<Spec> mlp_specs() {
  return {f64({kIn, kHidden}), f64({kHidden}), f64({kHidden, kClasses}), f64({kClasses}),
          f64({kBatch, kIn}),  f64({kBatch, kClasses})};
}

TEST(GradModels, MlpMatchesTheHandDerivedBackwardPass) {
  auto loss = [](Expr w1, Expr b1, Expr w2, Expr b2, Expr x, Expr y) {
    return mean(softmax_cross_entropy(dot(tanh(dot(x, w1) + b1), w2) + b2, y));
  };
  testing::HostFunction by_grad(grad(mlp_specs(), loss, {0, 1, 2, 3}));
  testing::HostFunction by_hand(trace(mlp_specs(), [](Expr w1, Expr b1, Expr w2, Expr b2, Expr x, Expr y) {
    Expr h = tanh(dot(x, w1) + b1);
    Expr d_logits = (softmax(dot(h, w2) + b2) - y) / static_cast<double>(kBatch);
    Expr d_pre = dot(d_logits, {1}, {}, w2, {1}, {}) * (1 - h * h);
    return tuple(dot(x, {0}, {}, d_pre, {0}, {}), sum(d_pre, {.axes = {0}}), dot(h, {0}, {}, d_logits, {0}, {}),
                 sum(d_logits, {.axes = {0}}));
  }));

  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  std::vector<testing::Values> args;
  for (const Spec& s : mlp_specs()) {
    testing::Values v(static_cast<size_t>(s.size()));
    for (double& e : v) e = normal(rng);
    args.push_back(v);
  }
  args[5].assign(static_cast<size_t>(kBatch * kClasses), 0.0);
  for (int64_t i = 0; i < kBatch; ++i) args[5][static_cast<size_t>(i * kClasses + i % kClasses)] = 1.0;

  std::vector<testing::Values> g = by_grad(args), h = by_hand(args);
  const char* names[] = {"d/d w1", "d/d b1", "d/d w2", "d/d b2"};
  ASSERT_EQ(g.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    ASSERT_EQ(g[k].size(), h[k].size()) << names[k];
    for (size_t i = 0; i < g[k].size(); ++i)
      EXPECT_NEAR(g[k][i], h[k][i], 1e-12) << names[k] << " [" << i << "]";  // the same sums, rounding apart
  }
}

}  // namespace
}  // namespace sluice
