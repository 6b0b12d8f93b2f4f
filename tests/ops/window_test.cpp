// Windowed reductions, window scatters and cumulative scans: shapes, types, errors.
#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
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

TEST(Window, ProductTypes) {
  EXPECT_EQ(window_product(arg(f32({10})), {3}, {.strides = {2}}).spec(), f32({4}));
  EXPECT_EQ(window_product(arg(pred({4})), {2}).dtype(), DType::U8) << "products of pred in u8";
  EXPECT_EQ(window_product(arg(c64({4})), {2}).dtype(), DType::C64);
}

TEST(WindowScatter, ShapesTypesAndErrors) {
  const Expr x = arg(f32({4, 6}));
  const Expr w = window_scatter_max(x, arg(f32({2, 2})), 0.0, {2, 3}, {.strides = {2, 3}});
  EXPECT_EQ(w.spec(), f32({4, 6})) << "the result has x's shape";
  EXPECT_EQ(w.node()->operands.size(), 3u);
  EXPECT_EQ(window_scatter_min(arg(s8({4})), arg(s32({2})), arg(f32({})), {2}, {.strides = {2}}).dtype(),
            DType::F32)
      << "source and init meet; x only compares";
  EXPECT_EQ(window_scatter_max(arg(f64({4})), arg(pred({3})), arg(pred({})), {2}).dtype(), DType::U8);
  EXPECT_THROW_WITH(window_scatter_max(x, arg(f32({2, 3})), 0.0, {2, 3}, {.strides = {2, 3}}), ShapeError,
                    "window_scatter_max", "source", "[2][2]", "[2][3]");
  EXPECT_THROW_WITH(window_scatter_max(x, arg(f32({2, 2})), arg(f32({1})), {2, 3}, {.strides = {2, 3}}),
                    ShapeError, "window_scatter_max", "init", "scalar", "[1]");
  EXPECT_THROW_WITH(window_scatter_min(arg(c64({4})), arg(c64({3})), 0.0, {2}), TypeError,
                    "window_scatter_min", "x", "c64");
  EXPECT_THROW_WITH(window_scatter_min(x, arg(f32({2, 2})), 0.0, {2}), ShapeError, "window_scatter_min",
                    "window");
  EXPECT_THROW_WITH(window_scatter_max(Expr(), arg(f32({2})), 0.0, {2}), Error, "window_scatter_max", "x");
}

TEST(CumulativeScans, TypesAndErrors) {
  EXPECT_EQ(cumulative_product(arg(s8({3}))).dtype(), DType::S8) << "integers wrap in their type";
  EXPECT_EQ(cumulative_product(arg(pred({3}))).dtype(), DType::U8);
  EXPECT_EQ(cumulative_product(arg(c64({3}))).dtype(), DType::C64);
  EXPECT_EQ(cumulative_max(arg(pred({3}))).dtype(), DType::Pred);
  EXPECT_EQ(cumulative_min(arg(f16({2, 3})), {.axis = -1}).node()->attrs.axis, 1);
  EXPECT_THROW_WITH(cumulative_max(arg(c64({3}))), TypeError, "cumulative_max", "c64");
  EXPECT_THROW_WITH(cumulative_min(arg(f32({3})), {.axis = 2}), ShapeError, "cumulative_min", "axis", "2");
  EXPECT_THROW_WITH(cumulative_product(Expr()), Error, "cumulative_product", "x");
}

}  // namespace
}  // namespace sluice
