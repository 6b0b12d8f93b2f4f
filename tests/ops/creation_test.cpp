// Builders that make leaves: constant, weak_scalar, iota, eye.
#include <gtest/gtest.h>

#include <cmath>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

TEST(Constant, FromLiteralKeepsSpecAndData) {
  const Expr c = constant(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(c.spec(), f32({2, 3}));
  EXPECT_EQ(c.node()->op, Op::Constant);
  ASSERT_TRUE(c.node()->attrs.literal);
  EXPECT_EQ(c.node()->attrs.literal->bytes.size(), 24u);
  EXPECT_FALSE(c.node()->attrs.weak);
}

TEST(Constant, ScalarOfAnyDType) {
  EXPECT_EQ(constant(3.0, DType::S8).spec(), s8());
  EXPECT_EQ(constant(0.5, DType::BF16).spec(), bf16());
  EXPECT_EQ(constant(1.0, DType::C128).spec(), c128());
}

TEST(Constant, ScalarConvertsAsAsTypeDoes) {
  const auto byte = [](const Expr& e) { return e.node()->attrs.literal->bytes.at(0); };
  EXPECT_EQ(static_cast<int8_t>(byte(constant(-2.7, DType::S8))), -2) << "truncates toward zero";
  EXPECT_EQ(static_cast<int8_t>(byte(constant(1000.0, DType::S8))), 127) << "saturates";
  EXPECT_EQ(byte(constant(-5.0, DType::U8)), 0) << "saturates at 0";
  EXPECT_EQ(byte(constant(std::nan(""), DType::S8)), 0) << "NaN becomes 0";
  EXPECT_EQ(byte(constant(0.25, DType::Pred)), 1) << "nonzero is true";
}

TEST(Constant, RejectsDataOfTheWrongSize) {
  Literal bad{f32({2}), std::vector<uint8_t>(4)};
  EXPECT_THROW_WITH(constant(bad), Error, "constant", "8 bytes", "found 4");
}

TEST(WeakScalar, FloatsAreF64AndIntegersS64) {
  const Expr f = weak_scalar(1.5);
  const Expr i = weak_scalar(int64_t{7});
  EXPECT_EQ(f.spec(), f64());
  EXPECT_EQ(i.spec(), s64());
  EXPECT_TRUE(f.node()->attrs.weak);
  EXPECT_TRUE(i.node()->attrs.weak);
}

TEST(Iota, AllElementsOrOneAxis) {
  const Expr all = iota(s32({2, 3}));
  EXPECT_EQ(all.spec(), s32({2, 3}));
  EXPECT_EQ(all.node()->attrs.axis, -1) << "-1 counts through all elements";
  EXPECT_EQ(all.node()->attrs.dtype, DType::S32);
  EXPECT_EQ(iota(f32({2, 3}), 1).node()->attrs.axis, 1);
  EXPECT_EQ(iota(f32({2, 3}), -1).node()->attrs.axis, 1) << "negative axes count from the end";
}

TEST(Iota, Errors) {
  EXPECT_THROW_WITH(iota(f32({2, 3}), 2), ShapeError, "iota", "axis", "2");
  EXPECT_THROW_WITH(iota(pred({3})), TypeError, "iota", "pred");
}

TEST(Eye, NeedsRankTwo) {
  EXPECT_EQ(eye(f32({3, 3})).spec(), f32({3, 3}));
  EXPECT_EQ(eye(pred({2, 4, 4})).spec(), pred({2, 4, 4}));
  EXPECT_EQ(eye(s8({2, 3})).node()->op, Op::Eye);
  EXPECT_THROW_WITH(eye(f32({3})), ShapeError, "eye", "rank >= 2", "f32[3]");
}

}  // namespace
}  // namespace sluice
