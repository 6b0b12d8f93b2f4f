#include <sluice/ops/function.h>

#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

Function running_sum(const Spec& x, const Spec& acc) {
  return trace({x, acc}, [](Expr v, Expr a) { return tuple(a, a + sum(v)); });
}

TEST(Function, SeparateTracesOfOneLambdaAreEqual) {
  const Function f = running_sum(f32({1024}), f32({}));
  const Function g = running_sum(f32({1024}), f32({}));
  EXPECT_EQ(f.hash(), g.hash());
  EXPECT_TRUE(f == g);
  EXPECT_EQ(std::hash<Function>()(f), f.hash());
}

TEST(Function, AnyDifferenceChangesHashAndEquality) {
  const Function base = trace({f32({4})}, [](Expr x) { return x + 1; });
  const std::vector<std::pair<const char*, Function>> others = {
      {"op", trace({f32({4})}, [](Expr x) { return x - 1; })},
      {"constant value", trace({f32({4})}, [](Expr x) { return x + 2; })},
      {"constant dtype", trace({f32({4})}, [](Expr x) { return x + constant(1.0, DType::F64); })},
      {"input spec", trace({f32({5})}, [](Expr x) { return x + 1; })},
      {"input dtype", trace({f64({4})}, [](Expr x) { return x + 1; })},
      {"attrs", trace({f32({4})}, [](Expr x) { return reverse(x) + 1; })},
      {"extra input", trace({f32({4}), f32({})}, [](Expr x, Expr) { return x + 1; })},
  };
  for (const auto& [what, other] : others) {
    EXPECT_NE(base.hash(), other.hash()) << what;
    EXPECT_FALSE(base == other) << what;
  }
}

TEST(Function, AWeakScalarIsTheStrongConstantOfTheTensorsType) {
  const Function weak = trace({f32({4})}, [](Expr x) { return x + 1; });
  const Function strong = trace({f32({4})}, [](Expr x) { return x + constant(1.0, DType::F32); });
  EXPECT_TRUE(weak == strong) << weak.str() << strong.str();
  EXPECT_EQ(weak.hash(), strong.hash());
}

TEST(Function, OutputOrderMatters) {
  const Function ab = trace({f32({2}), f32({2})}, [](Expr a, Expr b) { return tuple(a * b, a - b); });
  const Function ba = trace({f32({2}), f32({2})}, [](Expr a, Expr b) { return tuple(a - b, a * b); });
  EXPECT_NE(ab.hash(), ba.hash());
  EXPECT_FALSE(ab == ba);
}

TEST(Function, ReductionAxesMatter) {
  const Function rows = trace({f32({2, 3})}, [](Expr x) { return sum(x, {.axes = {0}}); });
  const Function cols = trace({f32({2, 3})}, [](Expr x) { return sum(x, {.axes = {1}}); });
  EXPECT_NE(rows.hash(), cols.hash());
  EXPECT_FALSE(rows == cols);
}

TEST(Function, OutputsMayRepeatBeParametersOrConstants) {
  const Function f = trace({f32({3}), s32({})}, [](Expr x, Expr n) {
    Expr y = exp(x);
    return tuple(y, y, n, x, constant(2.0, DType::F64), weak_scalar(1.5));
  });
  ASSERT_EQ(f.outputs().size(), 6u);
  EXPECT_EQ(f.outputs()[0].node(), f.outputs()[1].node()) << "a repeated output is one node";
  EXPECT_EQ(f.outputs()[2].node()->op, Op::Parameter);
  const std::vector<Spec> specs = f.output_specs();
  EXPECT_EQ(specs[0], f32({3}));
  EXPECT_EQ(specs[2], s32());
  EXPECT_EQ(specs[4], f64());
  EXPECT_EQ(specs[5], f64()) << "a weak constant that is an output keeps its type";
  EXPECT_TRUE(f.outputs()[5].node()->attrs.weak);
  EXPECT_TRUE(f == trace({f32({3}), s32({})}, [](Expr x, Expr n) {
                Expr y = exp(x);
                return tuple(y, y, n, x, constant(2.0, DType::F64), weak_scalar(1.5));
              }));
}

TEST(Function, VectorCallableAndNoArguments) {
  const Function f = trace({f32({2}), f32({2}), f32({2})},
                           [](const std::vector<Expr>& xs) { return xs[0] + xs[1] + xs[2]; });
  EXPECT_EQ(f.inputs().size(), 3u);
  EXPECT_EQ(f.output_specs()[0], f32({2}));
  const Function g = trace({}, [] { return iota(s32({4})); });
  EXPECT_EQ(g.output_specs()[0], s32({4}));
}

TEST(Function, StrListsNodesInTopologicalOrder) {
  const Function f = trace({f32({4}), f32({4})}, [](Expr a, Expr b) { return a + b; });
  EXPECT_EQ(f.str(),
            "%0 = parameter(0) : f32[4]\n"
            "%1 = parameter(1) : f32[4]\n"
            "%2 = add(%0, %1) : f32[4]\n"
            "return %2\n");
  const Function g = trace({f32({2, 3})}, [](Expr x) { return sum(x, {.axes = {1}}) * 2; });
  EXPECT_NE(g.str().find("sum(%0) axes=[1] : f32[2]"), std::string::npos) << g.str();
  EXPECT_NE(g.str().find("constant(2) : f32"), std::string::npos) << g.str();
}

TEST(Function, RejectsBadParametersAndEmptyOutputs) {
  EXPECT_THROW_WITH(Function({f32({3})}, {parameter(1, f32({3}))}), Error, "parameter", "1");
  EXPECT_THROW_WITH(Function({f32({3})}, {parameter(0, f32({4}))}), TypeError, "parameter 0", "f32[3]",
                    "f32[4]");
  EXPECT_THROW_WITH(Function({f32({3})}, {Expr()}), Error, "output 0", "empty");
  EXPECT_THROW_WITH(parameter(-1, f32()), Error, "parameter", "-1");
  EXPECT_THROW_WITH(trace_n<2>({f32({3})}, [](Expr a, Expr b) { return a + b; }), Error, "trace",
                    "expected 2", "found 1");
}

}  // namespace
}  // namespace sluice
