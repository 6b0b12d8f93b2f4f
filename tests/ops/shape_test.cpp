#include <sluice/ops/shape.h>

#include <gtest/gtest.h>

#include <sluice/base/error.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

TEST(Shape, SizeStridesAndString) {
  const Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3);
  EXPECT_EQ(s.size(), 24);
  EXPECT_EQ(s.strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(s.str(), "[2][3][4]");
  EXPECT_EQ(s[1], 3);
}

TEST(Shape, ScalarHasOneElementAndEmptyString) {
  const Shape s;
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.size(), 1);
  EXPECT_TRUE(s.strides().empty());
  EXPECT_EQ(s.str(), "");
}

TEST(Shape, ZeroDimsAreAllowed) {
  const Shape s{3, 0};
  EXPECT_EQ(s.size(), 0);
  EXPECT_EQ(s.strides(), (std::vector<int64_t>{0, 1}));
}

TEST(Shape, RejectsNegativeDimsAndRankAbove16) {
  EXPECT_THROW_WITH(Shape({2, -1}), ShapeError, "dims >= 0", "-1", "axis 1");
  EXPECT_THROW_WITH(Shape(std::vector<int64_t>(17, 1)), ShapeError, "at most 16", "17");
  EXPECT_NO_THROW(Shape(std::vector<int64_t>(16, 1)));
}

TEST(Spec, StringBytesAndMakers) {
  EXPECT_EQ(f32({2, 3}).str(), "f32[2][3]");
  EXPECT_EQ(s64().str(), "s64");
  EXPECT_EQ(c64({4}).bytes(), 32);
  EXPECT_EQ(pred({5}).bytes(), 5);
  EXPECT_EQ(f32({2, 3}), (Spec{DType::F32, Shape{2, 3}}));
  EXPECT_NE(f32({2, 3}), f64({2, 3}));
}

}  // namespace
}  // namespace sluice
