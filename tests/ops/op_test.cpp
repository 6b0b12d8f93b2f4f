#include "ops/op.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace sluice {
namespace {

TEST(Op, NamesArityAndFamiliesComeFromTheList) {
  EXPECT_EQ(op_name(Op::Add), "add");
  EXPECT_EQ(op_name(Op::WindowSum), "window_sum");
  EXPECT_EQ(op_name(Op::ErfInv), "erf_inv");
  EXPECT_EQ(op_arity(Op::Add), 2);
  EXPECT_EQ(op_arity(Op::Select), 3);
  EXPECT_EQ(op_arity(Op::Constant), 0);
  EXPECT_EQ(op_arity(Op::Concatenate), -1);
  EXPECT_EQ(op_family(Op::Exp), OpFamily::Unary);
  EXPECT_EQ(op_family(Op::AsType), OpFamily::Convert);
  EXPECT_EQ(op_family(Op::Ifft), OpFamily::Fft);
  EXPECT_EQ(op_family(Op::CumulativeSum), OpFamily::Scan);
}

TEST(Op, EveryOpHasADistinctName) {
  std::set<std::string> names;
  for (int i = 0; i < kOpCount; ++i) names.emplace(op_name(static_cast<Op>(i)));
  EXPECT_EQ(names.size(), static_cast<size_t>(kOpCount)) << "op_list.def repeats a name";
  EXPECT_EQ(op_name(static_cast<Op>(kOpCount - 1)), "loop_result") << "the last op of op_list.def";
}

TEST(Op, Predicates) {
  EXPECT_TRUE(is_elementwise(Op::Select));
  EXPECT_TRUE(is_elementwise(Op::Bitcast));
  EXPECT_FALSE(is_elementwise(Op::Broadcast));
  EXPECT_TRUE(is_comparison(Op::GreaterEqual));
  EXPECT_FALSE(is_comparison(Op::LogicalAnd));
  EXPECT_TRUE(is_logical(Op::LogicalXor));
  EXPECT_FALSE(is_logical(Op::BitwiseXor));
  EXPECT_TRUE(is_commutative(Op::Add));
  EXPECT_TRUE(is_commutative(Op::NotEqual));
  EXPECT_FALSE(is_commutative(Op::Subtract));
  EXPECT_FALSE(is_commutative(Op::Less));
  EXPECT_FALSE(is_commutative(Op::Pow));
}

}  // namespace
}  // namespace sluice
