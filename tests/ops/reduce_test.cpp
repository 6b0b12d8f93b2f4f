// Reductions: result specs, normalised axes, accumulation types, errors.
#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;

TEST(Reduce, AllAxesByDefaultStoredExplicitly) {
  const Expr s = sum(arg(f32({2, 3, 4})));
  EXPECT_EQ(s.spec(), f32());
  EXPECT_EQ(s.node()->attrs.axes, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_FALSE(s.node()->attrs.keep_axes);
}

TEST(Reduce, AxesAreSortedNonNegative) {
  const Expr s = sum(arg(f32({2, 3, 4})), {.axes = {-1, 0}});
  EXPECT_EQ(s.spec(), f32({3}));
  EXPECT_EQ(s.node()->attrs.axes, (std::vector<int64_t>{0, 2}));
  const Expr k = reduce_max(arg(f32({2, 3, 4})), {.axes = {2, 0}, .keep_axes = true});
  EXPECT_EQ(k.spec(), f32({1, 3, 1}));
  EXPECT_TRUE(k.node()->attrs.keep_axes);
  EXPECT_EQ(product(arg(f32({2, 3})), {.keep_axes = true}).spec(), f32({1, 1}));
  EXPECT_EQ(sum(arg(f32({}))).spec(), f32()) << "a scalar reduces over no axes";
}

TEST(Reduce, SumsAndProductsOfIntegersAccumulateIn64Bits) {
  const Expr s = sum(arg(s32({4})));
  EXPECT_EQ(s.spec(), s64());
  EXPECT_EQ(s.node()->operands.at(0)->op, Op::AsType) << "the kernel reads the accumulation type";
  EXPECT_EQ(s.node()->operands.at(0)->spec, s64({4}));
  EXPECT_EQ(product(arg(s8({4}))).dtype(), DType::S64);
  EXPECT_EQ(sum(arg(u8({4}))).dtype(), DType::U64);
  EXPECT_EQ(sum(arg(pred({4}))).dtype(), DType::U64);
  EXPECT_EQ(sum(arg(f16({4}))).dtype(), DType::F16);
  EXPECT_EQ(product(arg(c64({4}))).dtype(), DType::C64);
}

TEST(Reduce, MaxMinKeepTypeAllAnyArePred) {
  EXPECT_EQ(reduce_max(arg(u16({4}))).dtype(), DType::U16);
  EXPECT_EQ(reduce_min(arg(bf16({4}))).dtype(), DType::BF16);
  const Expr a = all(arg(f32({2, 4})), {.axes = {1}});
  EXPECT_EQ(a.spec(), pred({2}));
  EXPECT_EQ(a.node()->operands.at(0)->spec.dtype, DType::Pred) << "nonzero-ness is computed by as_type";
  EXPECT_EQ(any(arg(pred({4}))).node()->operands.at(0)->op, Op::Parameter);
}

TEST(Reduce, Errors) {
  const Expr x = arg(f32({2, 3}));
  EXPECT_THROW_WITH(sum(x, {.axes = {0, 0}}), ShapeError, "sum", "axes", "distinct", "[0, 0]");
  EXPECT_THROW_WITH(sum(x, {.axes = {0, -2}}), ShapeError, "sum", "distinct");
  EXPECT_THROW_WITH(product(x, {.axes = {2}}), ShapeError, "product", "axes", "found 2");
  EXPECT_THROW_WITH(reduce_max(arg(c64({2}))), TypeError, "reduce_max", "c64");
  EXPECT_THROW_WITH(reduce_min(arg(c128({2}))), TypeError, "reduce_min", "c128");
  EXPECT_THROW_WITH(all(Expr()), Error, "all", "argument x");
}

TEST(ArgReduce, S64IndicesAlongAnAxisOrFlattened) {
  const Expr x = arg(f32({2, 3}));
  const Expr a = argmax(x, {.axis = 1});
  EXPECT_EQ(a.spec(), s64({2}));
  EXPECT_EQ(a.node()->attrs.axis, 1);
  EXPECT_EQ(argmin(x, {.axis = -2, .keep_axis = true}).spec(), s64({1, 3}));
  EXPECT_EQ(argmin(x, {.axis = -2}).node()->attrs.axis, 0);
  const Expr flat = argmax(x);
  EXPECT_EQ(flat.spec(), s64());
  EXPECT_EQ(flat.node()->attrs.axis, -1) << "-1: index into the flattened tensor";
  EXPECT_EQ(argmax(x, {.tie_break = TieBreak::High}).node()->attrs.tie_break, TieBreak::High);
  EXPECT_EQ(argmax(arg(pred({3}))).spec(), s64());
}

TEST(ArgReduce, Errors) {
  EXPECT_THROW_WITH(argmax(arg(f32({2, 0})), {.axis = 1}), ShapeError, "argmax", "axis", "size >= 1");
  EXPECT_THROW_WITH(argmin(arg(f32({0}))), ShapeError, "argmin", "at least one element");
  EXPECT_THROW_WITH(argmax(arg(f32({2})), {.axis = 1}), ShapeError, "argmax", "axis", "1");
  EXPECT_THROW_WITH(argmax(arg(c64({2}))), TypeError, "argmax", "c64");
}

}  // namespace
}  // namespace sluice
