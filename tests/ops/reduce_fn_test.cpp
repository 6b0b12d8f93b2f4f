// reduce and window_reduce with a function: what is checked, and which
// functions become the built-in reductions (the same graph, so the same
// kernels, results and gradients).

#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;

TEST(ReduceFn, AddMultiplyMaxMinAreTheBuiltInReductions) {
  const Spec x = f32({4, 6});
  const auto same_as = [&](const ReduceFn& fn, double init, Expr (*built_in)(Expr, const ReduceOptions&)) {
    return trace({x}, [&](Expr v) { return reduce(v, init, fn, {.axes = {1}}); }) ==
           trace({x}, [&](Expr v) { return built_in(v, {.axes = {1}}); });
  };
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(same_as([](Expr a, Expr e) { return a + e; }, 0.0, sum));
  EXPECT_TRUE(same_as([](Expr a, Expr e) { return e + a; }, -0.0, sum))
      << "either way round; -0 is add's identity too";
  EXPECT_TRUE(same_as([](Expr a, Expr e) { return a * e; }, 1.0, product));
  EXPECT_TRUE(same_as([](Expr a, Expr e) { return max(a, e); }, -inf, reduce_max));
  EXPECT_TRUE(same_as([](Expr a, Expr e) { return min(e, a); }, inf, reduce_min));
  EXPECT_FALSE(same_as([](Expr a, Expr e) { return a + e; }, 2.0, sum)) << "init 2 is added once more";
  EXPECT_FALSE(same_as([](Expr a, Expr e) { return a - e; }, 0.0, sum));
  // Integers: the built-in sum accumulates in 64 bits; fn's result is x's dtype.
  const Function ints =
      trace({s32({5})}, [](Expr v) { return reduce(v, 0, [](Expr a, Expr e) { return a + e; }); });
  EXPECT_EQ(ints.output_specs().at(0), s32({}));
  EXPECT_EQ(ints, trace({s32({5})}, [](Expr v) { return as_type(sum(v), DType::S32); }));
  // An integer's lowest is max's identity.
  EXPECT_EQ(trace({s32({5})},
                  [](Expr v) {
                    return reduce(v, std::numeric_limits<int32_t>::min(),
                                  [](Expr a, Expr e) { return max(a, e); });
                  }),
            trace({s32({5})}, [](Expr v) { return reduce_max(v); }));
}

TEST(ReduceFn, WindowsOfAddMultiplyMaxMinAreTheBuiltInWindows) {
  const Spec x = f32({9});
  const auto add = [](Expr a, Expr e) { return a + e; };
  // window_reduce of add from init, against window_sum of the same windows.
  const auto is_window_sum = [&](double init, const WindowReduceOptions& o) {
    return trace({x}, [&](Expr v) { return window_reduce(v, init, add, {3}, o); }) == trace({x}, [&](Expr v) {
             return window_sum(v, {3}, {.strides = o.strides, .padding = o.padding});
           });
  };
  const WindowReduceOptions o{.strides = {2}, .padding = {{1, 1}}};
  EXPECT_TRUE(is_window_sum(0.0, o));
  // A dilated window, or an init other than the identity (which padding holds), is not.
  EXPECT_FALSE(is_window_sum(0.0, {.window_dilations = {2}}));
  EXPECT_FALSE(is_window_sum(1.0, o));
}

TEST(ReduceFn, ShapesAndTypes) {
  const auto logaddexp = [](Expr a, Expr e) { return max(a, e) + log1p(exp(-abs(a - e))); };
  EXPECT_EQ(reduce(arg(f32({4, 9})), -1.0, logaddexp, {.axes = {1}}).spec(), f32({4}));
  EXPECT_EQ(reduce(arg(f32({4, 9, 2})), -1.0, logaddexp, {.axes = {0, 2}, .keep_axes = true}).spec(),
            f32({1, 9, 1}));
  EXPECT_EQ(reduce(arg(f64({4, 9})), -1.0, logaddexp).spec(), f64({}));
  EXPECT_EQ(window_reduce(arg(f32({9})), 0.0, logaddexp, {3}, {.strides = {2}}).spec(), f32({4}));
  EXPECT_EQ(window_reduce(arg(f32({9, 5})), 0.0, logaddexp, {3, 2}, {.window_dilations = {2, 3}}).spec(),
            f32({5, 2}));
}

TEST(ReduceFn, ArgumentsAreChecked) {
  const Expr x = arg(f32({4, 6}));
  const auto add = [](Expr a, Expr e) { return a + e; };
  EXPECT_THROW_WITH(reduce(x, 0.0, [](Expr a, Expr e) { return sum(a + e); }), TypeError, "reduce", "fn",
                    "elementwise ops of its two scalars", "sum");
  EXPECT_THROW_WITH(reduce(x, 0.0, [](Expr a, Expr e) { return a + product(e); }), TypeError, "reduce", "fn",
                    "product");
  EXPECT_THROW_WITH(reduce(x, 0.0, [](Expr a, Expr e) { return broadcast(a + e, Shape{2}); }), ShapeError,
                    "reduce", "fn", "a scalar result", "f32[2]");
  EXPECT_THROW_WITH(reduce(x, 0.0, [](Expr a, Expr e) { return as_type(a + e, DType::F64); }), TypeError,
                    "reduce", "fn", "f32", "f64");
  EXPECT_THROW_WITH(reduce(x, 0.0, [](Expr a, Expr) { return a < 1.0; }), TypeError, "reduce", "fn", "pred");
  EXPECT_THROW_WITH(reduce(x, 0.0, ReduceFn{}), TypeError, "reduce", "fn", "none");
  EXPECT_THROW_WITH(reduce(x, arg(f32({2}), 1), add), ShapeError, "reduce", "init", "a scalar", "f32[2]");
  EXPECT_THROW_WITH(reduce(x, 0.0, add, {.axes = {2}}), ShapeError, "reduce", "axes");
  EXPECT_THROW_WITH(window_reduce(x, 0.0, add, {3}), ShapeError, "window_reduce");
  EXPECT_THROW_WITH(window_reduce(x, 0.0, add, {3, 3}, {.window_dilations = {1}}), ShapeError,
                    "window_reduce", "window_dilations", "one per axis (2)", "1");
  EXPECT_THROW_WITH(window_reduce(x, 0.0, add, {3, 3}, {.window_dilations = {1, 0}}), ShapeError,
                    "window_reduce", "window_dilations", ">= 1");
  EXPECT_THROW_WITH(window_reduce(x, 0.0, add, {3, 3}, {.window_dilations = {2, 3}}), ShapeError,
                    "window_reduce");
  // Values fn captures from the enclosing function may be anything; only
  // what depends on its arguments must be elementwise.
  const Expr w = arg(f32({3}), 1);
  EXPECT_EQ(reduce(x, 0.0, [&](Expr a, Expr e) { return a + e * sum(w); }).spec(), f32({}));
}

TEST(ReduceFn, ACapturedValueOnADeepGraphIsWalkedWithoutRecursion) {
  // 200k nodes deep: a recursive walk would overflow the stack.
  Expr w = arg(f32({}), 1);
  for (int i = 0; i < 200000; ++i) w = w + 1.0f;
  EXPECT_EQ(reduce(arg(f32({4})), 0.0, [&](Expr a, Expr e) { return a + e * w; }).spec(), f32({}));
}

}  // namespace
}  // namespace sluice
