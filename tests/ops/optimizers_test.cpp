// Each optimizer against its published update rule on a two-parameter
// problem, loss(x, y) = (x - 3)^2 + 10 (y + 1)^2 from (0, 0): five steps,
// compiled and run as a stage would, the state carried from step to step.
// The expected values come from tests/ops/optimizers_reference.py (numpy).

#include <sluice/ops/optimizers.h>

#include <gtest/gtest.h>

#include <map>

#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using optimizers::Optimizer;
using Point = std::pair<double, double>;

// Printed by optimizers_reference.py: (x, y) after steps 1 to 5.
const std::map<std::string, std::vector<Point>> kExpected = {
    {"sgd", {{0.30000000000000004, -1}, {0.57000000000000006, -1}, {0.81300000000000006, -1}, {1.0317000000000001, -1}, {1.2285300000000001, -1}}},
    {"momentum", {{0.30000000000000004, -1}, {0.84000000000000008, -1.8999999999999999}, {1.5420000000000003, -1.8099999999999998}, {2.3196000000000003, -0.91899999999999993}, {3.0874800000000002, -0.19810000000000005}}},
    {"adam", {{0.099999999833333339, -0.099999999950000001}, {0.19989729258521099, -0.19958777222669788}, {0.29961847654925267, -0.29841372845651593}, {0.39908646894421451, -0.3960609413237795}, {0.49822054377271291, -0.49203634313224887}}},
    {"adamw", {{0.099999999833333339, -0.099999999950000001}, {0.19979729258537768, -0.19948777222674788}, {0.29931884418672694, -0.29811509206154735}, {0.39848815653892172, -0.39546774295584142}, {0.49722532597886038, -0.49105715538267297}}},
};

// Five steps of `opt` from (0, 0); (x, y) after each.
std::vector<Point> run_steps(const Optimizer& opt) {
  const std::vector<Spec> params{f64({}), f64({})};
  Function init = trace(params, [&](std::vector<Expr> p) { return opt.init(p); });
  // sgd keeps no state: a function with no outputs does not compile.
  std::vector<Tensor> state;
  if (!init.outputs().empty()) state = compile(init).run({scalar(0.0), scalar(0.0)});
  std::vector<Spec> specs = params;
  for (const Tensor& s : state) specs.push_back(s.spec());
  Function step = trace(specs, [&](std::vector<Expr> in) {
    Tuple p(in.begin(), in.begin() + 2), s(in.begin() + 2, in.end());
    Tuple g{2 * (p[0] - 3), 20 * (p[1] + 1)};
    optimizers::Update u = opt.update(p, g, s);
    u.params.insert(u.params.end(), u.state.begin(), u.state.end());
    return u.params;
  });
  Executable exe = compile(step);
  std::vector<Tensor> carried{scalar(0.0), scalar(0.0)};
  carried.insert(carried.end(), state.begin(), state.end());
  std::vector<Point> path;
  for (int t = 0; t < 5; ++t) {
    carried = exe.run(carried);
    path.emplace_back(carried[0].to_vector<double>()[0], carried[1].to_vector<double>()[0]);
  }
  return path;
}

TEST(Optimizers, EachFollowsItsPublishedRule) {
  const std::map<std::string, Optimizer> all = {{"sgd", optimizers::sgd(0.05)},
                                                {"momentum", optimizers::momentum(0.05, 0.9)},
                                                {"adam", optimizers::adam(0.1)},
                                                {"adamw", optimizers::adamw(0.1, {}, 0.01)}};
  for (const auto& [name, opt] : all) {
    std::vector<Point> path = run_steps(opt);
    const std::vector<Point>& want = kExpected.at(name);
    ASSERT_EQ(path.size(), want.size());
    for (size_t t = 0; t < want.size(); ++t) {
      // f64 throughout: only rounding separates the two (pow and sqrt).
      EXPECT_NEAR(path[t].first, want[t].first, 1e-12) << name << ", x after step " << t + 1;
      EXPECT_NEAR(path[t].second, want[t].second, 1e-12) << name << ", y after step " << t + 1;
    }
  }
}

TEST(Optimizers, StateIsZerosAndAStepCount) {
  Tuple state = optimizers::adam(1e-3).init({testing::arg(f32({3, 4})), testing::arg(f32({4}), 1)});
  ASSERT_EQ(state.size(), 5u) << "the step count, two m and two v";
  EXPECT_EQ(state[0].spec(), s64({}));
  EXPECT_EQ(state[1].spec(), f32({3, 4}));
  EXPECT_EQ(state[4].spec(), f32({4}));
  EXPECT_TRUE(optimizers::sgd(0.1).init({testing::arg(f32({3}))}).empty());
}

TEST(Optimizers, MismatchedArgumentsNameTheOptimizer) {
  Expr p = testing::arg(f32({3})), q = testing::arg(f32({2}), 1);
  Optimizer adam = optimizers::adam(1e-3);
  Tuple state = adam.init({p});
  EXPECT_THROW_WITH(adam.update({p}, {q}, state), ShapeError, "adam", "grads 0", "f32[3]", "f32[2]");
  EXPECT_THROW_WITH(adam.update({p}, {p, p}, state), ShapeError, "adam", "grads", "expected 1", "found 2");
  EXPECT_THROW_WITH(adam.update({p}, {p}, {}), ShapeError, "adam", "state", "expected 3");
  EXPECT_THROW_WITH(optimizers::momentum(0.1).update({p}, {p}, {q}), ShapeError, "momentum", "state 0");
  Expr n = testing::arg(s32({3}));
  EXPECT_THROW_WITH(optimizers::sgd(0.1).update({n}, {n}, {}), TypeError, "sgd", "parameter 0", "real float");
}

}  // namespace
}  // namespace sluice
