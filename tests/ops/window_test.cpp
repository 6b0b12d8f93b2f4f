// Windowed reductions and cumulative sums.
#include <gtest/gtest.h>

#include "ops/ops.h"
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;

TEST(Window, ValidWindowsByDefault) {
  const Expr w = window_sum(arg(f32({10})), {3});
  EXPECT_EQ(w.spec(), f32({8}));
  EXPECT_EQ(w.node()->attrs.dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(w.node()->attrs.strides, (std::vector<int64_t>{1})) << "defaults are stored";
  EXPECT_EQ(w.node()->attrs.padding, (std::vector<PadDim>{PadDim{}}));
}

TEST(Window, StridesAndPadding) {
  EXPECT_EQ(window_max(arg(f32({10})), {3}, {.strides = {2}}).spec(), f32({4})) << "floor((10 - 3) / 2) + 1";
  EXPECT_EQ(window_min(arg(s32({8, 8})), {2, 2}, {.padding = {{1, 1, 0}, {0, 0, 0}}}).spec(), s32({9, 7}));
  EXPECT_EQ(window_sum(arg(f32({2, 6})), {1, 6}, {.strides = {1, 6}}).spec(), f32({2, 1}));
  EXPECT_EQ(window_sum(arg(f32({2})), {3}, {.padding = {{1, 0, 0}}}).spec(), f32({1}));
}

TEST(Window, Types) {
  EXPECT_EQ(window_sum(arg(pred({4})), {2}).dtype(), DType::U8) << "sums of pred count in u8";
  EXPECT_EQ(window_max(arg(pred({4})), {2}).dtype(), DType::Pred);
  EXPECT_EQ(window_sum(arg(c64({4})), {2}).dtype(), DType::C64);
  EXPECT_THROW_WITH(window_max(arg(c64({4})), {2}), TypeError, "window_max", "c64");
}

TEST(Window, Errors) {
  const Expr x = arg(f32({4, 4}));
  EXPECT_THROW_WITH(window_sum(x, {2}), ShapeError, "window_sum", "window", "2 dims", "[2]");
  EXPECT_THROW_WITH(window_sum(x, {0, 2}), ShapeError, "window_sum", "window", ">= 1", "[0, 2]");
  EXPECT_THROW_WITH(window_max(x, {5, 2}), ShapeError, "window_max", "window", "padded", "[5, 2]");
  EXPECT_THROW_WITH(window_min(x, {2, 2}, {.strides = {1, 0}}), ShapeError, "window_min", "strides",
                    "[1, 0]");
  EXPECT_THROW_WITH(window_sum(x, {2, 2}, {.strides = {1}}), ShapeError, "window_sum", "strides",
                    "2 entries");
  EXPECT_THROW_WITH(window_sum(x, {2, 2}, {.padding = {{-1, 0, 0}, {0, 0, 0}}}), ShapeError, "window_sum",
                    "padding", "low -1");
  EXPECT_THROW_WITH(window_sum(x, {2, 2}, {.padding = {{0, 0, 1}, {0, 0, 0}}}), ShapeError, "window_sum",
                    "padding", "interior 1");
}

TEST(CumulativeSum, AxisAndDirection) {
  const Expr c = cumulative_sum(arg(f32({3, 4})), {.axis = -1, .reverse = true});
  EXPECT_EQ(c.spec(), f32({3, 4}));
  EXPECT_EQ(c.node()->attrs.axis, 1);
  EXPECT_TRUE(c.node()->attrs.reverse);
  EXPECT_EQ(cumulative_sum(arg(s16({3}))).dtype(), DType::S16);
  EXPECT_EQ(cumulative_sum(arg(pred({3}))).dtype(), DType::U8);
  EXPECT_THROW_WITH(cumulative_sum(arg(f32({3})), {.axis = 1}), ShapeError, "cumulative_sum", "axis", "1");
  EXPECT_THROW_WITH(cumulative_sum(arg(f32({}))), ShapeError, "cumulative_sum", "axis");
}

}  // namespace
}  // namespace sluice
