#include <sluice/ops/op.h>

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
  EXPECT_EQ(op_name(static_cast<Op>(kOpCount - 1)), "result") << "the last op of op_list.def";
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
  EXPECT_TRUE(op_has(Op::Atan2, kRealOnly));
  EXPECT_TRUE(op_has(Op::Clip, kExact));
  EXPECT_FALSE(op_has(Op::Exp, kExact));
  EXPECT_TRUE(is_differentiable(Op::Dot));
  EXPECT_FALSE(is_differentiable(Op::Floor)) << "piecewise constant: passes no gradient";
  EXPECT_FALSE(is_differentiable(Op::StopGradient));
}

// What a backend asks instead of deriving types again: the result dtype of
// an elementwise op for operands already of its compute dtype.
TEST(Op, ResultDtypesComeFromTheTypeRule) {
  EXPECT_EQ(op_type_rule(Op::Exp), OpTypeRule::Floating);
  EXPECT_EQ(op_result_dtype(Op::Exp, DType::F16), DType::F16);
  EXPECT_EQ(op_result_dtype(Op::Less, DType::S32), DType::Pred);
  EXPECT_EQ(op_result_dtype(Op::IsNan, DType::F64), DType::Pred);
  EXPECT_EQ(op_result_dtype(Op::Abs, DType::C128), DType::F64);
  EXPECT_EQ(op_result_dtype(Op::Abs, DType::S8), DType::S8);
  EXPECT_EQ(op_result_dtype(Op::Imag, DType::C64), DType::F32);
  EXPECT_EQ(op_result_dtype(Op::Conjugate, DType::F32), DType::C64);
  EXPECT_EQ(op_result_dtype(Op::Select, DType::Pred), DType::Pred);
  EXPECT_EQ(op_result_dtype(Op::BitwiseAnd, DType::U16), DType::U16);
}

}  // namespace
}  // namespace sluice
