// Unary, binary and ternary elementwise builders: result specs, promotion,
// weak scalars, broadcasting, and the explicit graph they build.
#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;
using testing::weak;

const Node& operand(const Expr& e, size_t i) { return *e.node()->operands.at(i); }

TEST(Binary, BroadcastsAndPromotesExplicitly) {
  const Expr a = arg(s32({3}), 0);
  const Expr b = arg(f32({2, 3}), 1);
  const Expr c = add(a, b);
  EXPECT_EQ(c.spec(), f32({2, 3}));
  // add(broadcast(as_type(a, f32), [2][3], axes {1}), b)
  const Node& lhs = operand(c, 0);
  EXPECT_EQ(lhs.op, Op::Broadcast);
  EXPECT_EQ(lhs.spec, f32({2, 3}));
  EXPECT_EQ(lhs.attrs.axes, (std::vector<int64_t>{1})) << "right-aligned";
  EXPECT_EQ(lhs.operands.at(0)->op, Op::AsType);
  EXPECT_EQ(lhs.operands.at(0)->spec, f32({3}));
  EXPECT_EQ(lhs.operands.at(0)->attrs.dtype, DType::F32);
  EXPECT_EQ(operand(c, 1).op, Op::Parameter) << "an operand already right needs nothing";
}

TEST(Binary, BroadcastsOnesAgainstEachOther) {
  EXPECT_EQ(multiply(arg(f32({2, 1})), arg(f32({1, 3}))).spec(), f32({2, 3}));
  EXPECT_EQ(subtract(arg(f32({4, 1, 5})), arg(f32({3, 1}))).spec(), f32({4, 3, 5}));
  EXPECT_EQ(add(arg(f32({0, 3})), arg(f32({3}))).spec(), f32({0, 3}));
  EXPECT_EQ(add(arg(f32({})), arg(f32({}))).spec(), f32());
}

TEST(Binary, IncompatibleShapesAreShapeErrors) {
  EXPECT_THROW_WITH(add(arg(f32({2})), arg(f32({3}))), ShapeError, "add", "[2]", "[3]");
  EXPECT_THROW_WITH(less(arg(f32({2, 3})), arg(f32({3, 3}))), ShapeError, "less", "[2][3]", "[3][3]");
}

struct PromotionCase {
  const char* what;
  Expr result;
  DType expected;
};

TEST(Binary, PromotionWithWeakScalars) {
  const PromotionCase cases[] = {
      {"s8 + 1", arg(s8({3})) + 1, DType::S8},
      {"1 + s8", 1 + arg(s8({3})), DType::S8},
      {"s32 + 1.5", arg(s32({3})) + 1.5, DType::F32},
      {"f16 + 1.5", arg(f16({3})) + 1.5, DType::F16},
      {"bf16 * 2", arg(bf16({3})) * 2, DType::BF16},
      {"u8 + 1", arg(u8({3})) + 1, DType::U8},
      {"pred + 1", arg(pred({3})) + 1, DType::U8},
      {"pred + 1.5", arg(pred({3})) + 1.5, DType::F32},
      {"c64 + 1.5", arg(c64({3})) + 1.5, DType::C64},
      {"u8 + s8", arg(u8({3})) + arg(s8({3}), 1), DType::S16},
      {"u32 + s32", arg(u32({3})) + arg(s32({3}), 1), DType::S64},
      {"u64 + s64", arg(u64({3})) + arg(s64({3}), 1), DType::S64},
      {"f16 + bf16", arg(f16({3})) + arg(bf16({3}), 1), DType::F32},
      {"f64 + c64", arg(f64({3})) + arg(c64({3}), 1), DType::C128},
      {"s64 + f16", arg(s64({3})) + arg(f16({3}), 1), DType::F16},
      {"pred + pred", arg(pred({3})) + arg(pred({3}), 1), DType::U8},
      {"pred * s8", arg(pred({3})) * arg(s8({3}), 1), DType::S8},
  };
  for (const auto& c : cases) EXPECT_EQ(c.result.dtype(), c.expected) << c.what;
}

TEST(Binary, WeakScalarBecomesAStrongConstantOfTheComputeType) {
  const Expr r = arg(s8({3})) + 1;
  const Node& b = operand(r, 1);
  ASSERT_EQ(b.op, Op::Broadcast);
  const Node& c = *b.operands.at(0);
  EXPECT_EQ(c.op, Op::Constant);
  EXPECT_EQ(c.spec, s8()) << "re-made in the compute dtype, no as_type node";
  EXPECT_FALSE(c.attrs.weak);
  EXPECT_EQ(static_cast<int8_t>(c.attrs.literal->bytes.at(0)), 1);
  EXPECT_FALSE(r.node()->attrs.weak) << "a strong operand makes a strong result";
}

TEST(Binary, TwoWeakScalarsPromoteAndStayWeak) {
  const Expr w = weak_scalar(int64_t{2}) + weak_scalar(0.5);
  EXPECT_EQ(w.spec(), f64());
  EXPECT_TRUE(w.node()->attrs.weak);
  EXPECT_EQ((arg(s32({2})) * w).dtype(), DType::F32) << "a weak float result meets an integer: f32";
  EXPECT_EQ((arg(f16({2})) * w).dtype(), DType::F16) << "a weak float result meets a float: its type";
  const Expr wi = weak_scalar(int64_t{2}) * weak_scalar(int64_t{3});
  EXPECT_EQ(wi.spec(), s64());
  EXPECT_EQ((arg(u16({2})) - wi).dtype(), DType::U16);
}

TEST(Binary, FloatOpsOfIntegersComputeInF32) {
  const Expr q = divide(arg(s32({4})), arg(s32({4}), 1));
  EXPECT_EQ(q.dtype(), DType::F32);
  EXPECT_EQ(operand(q, 0).op, Op::AsType);
  EXPECT_EQ(atan2(arg(u8({4})), arg(u8({4}), 1)).dtype(), DType::F32);
  EXPECT_EQ(divide(arg(f64({4})), arg(s32({4}), 1)).dtype(), DType::F64);
  EXPECT_EQ(pow(arg(s32({4})), arg(s32({4}), 1)).dtype(), DType::S32) << "pow of integers stays integer";
  EXPECT_EQ(pow(arg(f32({4})), weak(2)).dtype(), DType::F32);
}

TEST(Binary, ArithmeticOnPredComputesInU8) {
  const Expr p = arg(pred({4}));
  const Expr q = arg(pred({4}), 1);
  for (Expr r : {add(p, q), subtract(p, q), multiply(p, q), remainder(p, q), quotient(p, q), min(p, q),
                 max(p, q), left_shift(p, q)}) {
    EXPECT_EQ(r.dtype(), DType::U8) << op_name(r.node()->op);
    EXPECT_EQ(operand(r, 0).spec.dtype, DType::U8) << op_name(r.node()->op) << " operands are converted";
  }
  EXPECT_EQ(bitwise_and(p, q).dtype(), DType::Pred) << "bitwise ops keep pred";
  EXPECT_EQ(bitwise_xor(p, q).dtype(), DType::Pred);
  EXPECT_EQ(logical_or(p, q).dtype(), DType::Pred);
}

TEST(Binary, ComparisonsAndLogicalOpsArePred) {
  const Expr x = arg(f32({3}));
  const Expr y = arg(s64({3}), 1);
  for (Expr r : {equal(x, y), not_equal(x, y), less(x, y), less_equal(x, y), greater(x, y),
                 greater_equal(x, y), logical_and(x, y), logical_or(x, y), logical_xor(x, y)}) {
    EXPECT_EQ(r.spec(), pred({3})) << op_name(r.node()->op);
    EXPECT_EQ(operand(r, 1).spec.dtype, DType::F32)
        << op_name(r.node()->op) << " compares in the merged type";
  }
  EXPECT_EQ((x == 1).dtype(), DType::Pred);
  EXPECT_EQ((x < 0.5).dtype(), DType::Pred);
  EXPECT_EQ(equal(arg(c64({2})), arg(c64({2}), 1)).dtype(), DType::Pred) << "equality of complex is defined";
}

TEST(Binary, IntegerOnlyOpsRejectInexactTypes) {
  EXPECT_THROW_WITH(bitwise_and(arg(f32({3})), arg(s32({3}), 1)), TypeError, "bitwise_and", "argument a",
                    "f32");
  EXPECT_THROW_WITH(arg(s32({3})) | 1.5, TypeError, "bitwise_or", "argument b", "f64");
  EXPECT_THROW_WITH(quotient(arg(f16({3})), arg(f16({3}), 1)), TypeError, "quotient", "f16");
  EXPECT_THROW_WITH(left_shift(arg(s32({3})), arg(c64({3}), 1)), TypeError, "left_shift", "c64");
  EXPECT_EQ((arg(u16({3})) >> 2).dtype(), DType::U16);
}

TEST(Binary, OrderedOpsRejectComplex) {
  EXPECT_THROW_WITH(less(arg(c64({3})), arg(c64({3}), 1)), TypeError, "less", "c64");
  EXPECT_THROW_WITH(max(arg(f32({3})), arg(c64({3}), 1)), TypeError, "max", "argument b", "c64");
  EXPECT_THROW_WITH(remainder(arg(c128({3})), weak(2)), TypeError, "remainder", "c128");
  EXPECT_THROW_WITH(atan2(arg(c64({3})), arg(c64({3}), 1)), TypeError, "atan2");
}

TEST(Binary, EmptyExprIsAnError) {
  EXPECT_THROW_WITH(add(Expr(), arg(f32({3}))), Error, "add", "argument a", "empty");
  EXPECT_THROW_WITH(add(arg(f32({3})), Expr()), Error, "add", "argument b", "empty");
  EXPECT_THROW_WITH(exp(Expr()), Error, "exp", "argument x");
}

TEST(Unary, FloatFunctionsComputeIntegersInF32) {
  using Fn = Expr (*)(Expr);
  const Fn fns[] = {&exp,   &expm1, &log,   &log1p,   &sqrt, &rsqrt, &cbrt,   &sin,
                    &cos,   &tan,   &asin,  &acos,    &atan, &sinh,  &cosh,   &tanh,
                    &asinh, &acosh, &atanh, &sigmoid, &erf,  &erfc,  &erf_inv};
  for (Fn fn : fns) {
    const Expr r = fn(arg(s32({2, 2})));
    EXPECT_EQ(r.spec(), f32({2, 2})) << op_name(r.node()->op);
    EXPECT_EQ(operand(r, 0).op, Op::AsType) << op_name(r.node()->op);
    EXPECT_EQ(fn(arg(f16({2}))).dtype(), DType::F16) << op_name(r.node()->op) << " keeps a float type";
  }
  EXPECT_EQ(exp(arg(pred({2}))).dtype(), DType::F32);
  EXPECT_EQ(exp(arg(c64({2}))).dtype(), DType::C64);
  EXPECT_EQ(sqrt(arg(c128({2}))).dtype(), DType::C128);
}

TEST(Unary, SpecialFunctionsRejectComplex) {
  EXPECT_THROW_WITH(erf(arg(c64({2}))), TypeError, "erf", "c64");
  EXPECT_THROW_WITH(cbrt(arg(c128({2}))), TypeError, "cbrt", "c128");
  EXPECT_THROW_WITH(erf_inv(arg(c64({2}))), TypeError, "erf_inv");
}

TEST(Unary, ArithmeticKeepsTypeAndPredBecomesU8) {
  EXPECT_EQ(negate(arg(s8({3}))).spec(), s8({3}));
  EXPECT_EQ((-arg(f32({3}))).spec(), f32({3}));
  EXPECT_EQ(negate(arg(pred({3}))).dtype(), DType::U8);
  EXPECT_EQ(abs(arg(pred({3}))).dtype(), DType::U8);
  EXPECT_EQ(sign(arg(s64({3}))).dtype(), DType::S64);
  EXPECT_EQ(abs(arg(c64({3}))).dtype(), DType::F32) << "abs of complex is real";
  EXPECT_EQ(abs(arg(c128({3}))).dtype(), DType::F64);
  EXPECT_EQ(sign(arg(c64({3}))).dtype(), DType::C64);
}

TEST(Unary, PredicatesArePred) {
  EXPECT_EQ(is_nan(arg(f16({3}))).spec(), pred({3}));
  EXPECT_EQ(is_infinity(arg(c64({3}))).spec(), pred({3}));
  EXPECT_EQ(is_nan(arg(s32({3}))).spec(), pred({3}));
}

TEST(Unary, RoundingAnIntegerIsTheIntegerItself) {
  const Expr x = arg(s32({3}));
  EXPECT_EQ(floor(x).node(), x.node());
  EXPECT_EQ(ceil(x).node(), x.node());
  EXPECT_EQ(round(arg(pred({3}))).dtype(), DType::Pred);
  EXPECT_EQ(floor(arg(f32({3}))).node()->op, Op::Floor);
  EXPECT_THROW_WITH(round(arg(c64({3}))), TypeError, "round", "c64");
}

TEST(Unary, BitwiseAndCountingNeedIntegers) {
  EXPECT_EQ(bitwise_not(arg(u32({3}))).dtype(), DType::U32);
  EXPECT_EQ((~arg(pred({3}))).dtype(), DType::Pred);
  EXPECT_EQ(count_leading_zeros(arg(s16({3}))).dtype(), DType::S16);
  EXPECT_EQ(population_count(arg(u64({3}))).dtype(), DType::U64);
  EXPECT_THROW_WITH(bitwise_not(arg(f32({3}))), TypeError, "bitwise_not", "f32");
  EXPECT_THROW_WITH(count_leading_zeros(arg(f64({3}))), TypeError, "count_leading_zeros", "f64");
  EXPECT_THROW_WITH(population_count(arg(c64({3}))), TypeError, "population_count", "c64");
}

TEST(Unary, RealImagConjugate) {
  const Expr z = arg(c64({2}));
  EXPECT_EQ(real(z).spec(), f32({2}));
  EXPECT_EQ(imag(z).spec(), f32({2}));
  EXPECT_EQ(real(arg(c128({2}))).dtype(), DType::F64);
  EXPECT_EQ(conjugate(z).spec(), c64({2}));
  EXPECT_EQ(operand(conjugate(z), 0).op, Op::Parameter);
  const Expr x = arg(f32({2}));
  EXPECT_EQ(real(x).node(), x.node()) << "the real part of a real is itself";
  const Expr im = imag(x);
  EXPECT_EQ(im.spec(), f32({2})) << "zeros of the real's own type";
  EXPECT_EQ(im.node()->op, Op::Broadcast);
  EXPECT_EQ(im.node()->operands.at(0)->op, Op::Constant);
  const Expr cx = conjugate(arg(f64({2})));
  EXPECT_EQ(cx.spec(), c128({2})) << "conjugate of a real converts to complex first";
  EXPECT_EQ(operand(cx, 0).op, Op::AsType);
}

TEST(Unary, WeakScalarTakesNxDefaultType) {
  EXPECT_EQ(exp(weak_scalar(1.0)).spec(), f32()) << "as Nx.exp(1.0)";
  EXPECT_EQ(negate(weak_scalar(int64_t{3})).spec(), s64());
  EXPECT_FALSE(exp(weak_scalar(1.0)).node()->attrs.weak);
}

TEST(Select, ConvertsPredicateAndMergesValues) {
  const Expr r = select(arg(f32({3})), arg(s32({2, 3}), 1), arg(f32({3}), 2));
  EXPECT_EQ(r.spec(), f32({2, 3}));
  const Node& p = operand(r, 0);
  EXPECT_EQ(p.op, Op::Broadcast);
  EXPECT_EQ(p.operands.at(0)->op, Op::AsType) << "a non-pred predicate is converted: nonzero is true";
  EXPECT_EQ(p.operands.at(0)->spec.dtype, DType::Pred);
  EXPECT_EQ(operand(r, 1).spec, f32({2, 3}));
  EXPECT_EQ(select(arg(pred({3})), weak(1), weak(2.5)).dtype(), DType::F64)
      << "two weak values merge as weak";
  EXPECT_EQ(select(arg(pred({3})), arg(s8({3}), 1), weak(0)).dtype(), DType::S8);
  EXPECT_EQ(select(arg(pred({3})), arg(pred({3}), 1), arg(pred({3}), 2)).dtype(), DType::Pred);
}

TEST(Select, Errors) {
  EXPECT_THROW_WITH(select(arg(pred({2})), arg(f32({3}), 1), arg(f32({3}), 2)), ShapeError, "select", "[2]",
                    "[3]");
  EXPECT_THROW_WITH(select(Expr(), arg(f32({3}), 1), arg(f32({3}), 2)), Error, "select", "pred");
}

TEST(Clip, MergesAllThree) {
  EXPECT_EQ(clip(arg(s8({3})), weak(0), weak(10)).spec(), s8({3}));
  EXPECT_EQ(clip(arg(s32({3})), weak(0.5), weak(10)).dtype(), DType::F32);
  EXPECT_EQ(clip(arg(f32({2, 3})), arg(f32({3}), 1), arg(f32({2, 1}), 2)).spec(), f32({2, 3}));
  EXPECT_THROW_WITH(clip(arg(c64({3})), weak(0), weak(1)), TypeError, "clip", "c64");
}

TEST(AsType, ConvertsOrReturnsItself) {
  const Expr x = arg(f32({3}));
  EXPECT_EQ(as_type(x, DType::F32).node(), x.node());
  const Expr y = as_type(x, DType::S8);
  EXPECT_EQ(y.spec(), s8({3}));
  EXPECT_EQ(y.node()->op, Op::AsType);
  EXPECT_EQ(y.node()->attrs.dtype, DType::S8);
  const Expr c = as_type(weak_scalar(2.5), DType::F16);
  EXPECT_EQ(c.node()->op, Op::Constant) << "a weak scalar is re-made, not converted";
  EXPECT_EQ(c.spec(), f16());
}

TEST(Bitcast, SameWidthOnly) {
  EXPECT_EQ(bitcast(arg(f32({3})), DType::S32).spec(), s32({3}));
  EXPECT_EQ(bitcast(arg(c64({3})), DType::F64).node()->op, Op::Bitcast);
  EXPECT_EQ(bitcast(arg(pred({3})), DType::U8).dtype(), DType::U8);
  EXPECT_THROW_WITH(bitcast(arg(f32({3})), DType::F64), TypeError, "bitcast", "32 bits", "f64");
  EXPECT_THROW_WITH(bitcast(arg(u8({3})), DType::Pred), TypeError, "bitcast", "pred");
}

}  // namespace
}  // namespace sluice
