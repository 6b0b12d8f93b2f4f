// block: a named op with a traced fallback; what the builder checks, how
// inline_blocks puts the fallback in its place, and which gradient it has.

#include <gtest/gtest.h>

#include <sluice/devices/backend.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/passes/passes.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;

Function twice_sin() {
  return trace({f64({3})}, [](Expr x) { return tuple(2.0 * sin(x), cos(x)); });
}

TEST(Block, ResultsAreTheFallbacksOutputs) {
  const Tuple r = block("twice_sin", twice_sin(), {arg(f64({3}))});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].spec(), f64({3}));
  EXPECT_EQ(r[1].spec(), f64({3}));
  EXPECT_EQ(r[0].node()->operands[0]->op, Op::Block);
}

TEST(Block, ArgumentsAreChecked) {
  EXPECT_THROW_WITH(block("", twice_sin(), {arg(f64({3}))}), TypeError, "block", "name");
  EXPECT_THROW_WITH(block("twice_sin", twice_sin(), {arg(f32({3}))}), TypeError, "block 'twice_sin'",
                    "argument 0", "f64[3]", "f32[3]");
  EXPECT_THROW_WITH(block("twice_sin", twice_sin(), {arg(f64({4}))}), ShapeError, "block 'twice_sin'",
                    "f64[4]");
  EXPECT_THROW_WITH(block("twice_sin", twice_sin(), {}), ShapeError, "block 'twice_sin'", "1 arguments");
  EXPECT_THROW_WITH(register_block_gradient("", {}), TypeError, "register_block_gradient", "name");
  EXPECT_THROW_WITH(register_block_gradient("twice_sin", {}), TypeError, "register_block_gradient", "rule");
}

TEST(Block, InliningPutsTheFallbackInItsPlace) {
  const Function with_block = trace({f64({3})}, [](Expr x) {
    const Tuple r = block("twice_sin", twice_sin(), {x + 1.0});
    return r[0] * r[1];
  });
  const Function written = trace({f64({3})}, [](Expr x) {
    const Expr y = x + 1.0;
    return (2.0 * sin(y)) * cos(y);
  });
  EXPECT_EQ(passes::inline_blocks(with_block), written);
  EXPECT_EQ(passes::inline_blocks(with_block, [](const Node&) { return true; }), with_block)
      << "claimed natively";
  // A fallback's own blocks are inlined too.
  const Function outer = trace({f64({3})}, [](Expr x) { return block("twice_sin", twice_sin(), {x})[0]; });
  const Function nested = trace({f64({3})}, [&](Expr x) { return block("outer", outer, {x})[0]; });
  EXPECT_EQ(passes::inline_blocks(nested), trace({f64({3})}, [](Expr x) { return 2.0 * sin(x); }));
}

TEST(Block, TheGradientIsTheFallbacksUnlessARuleIsRegistered) {
  const auto loss = [](const std::string& name) {
    return trace({f64({3})}, [name](Expr x) { return sum(block(name, twice_sin(), {x})[0]); });
  };
  const Function fallback_loss = trace({f64({3})}, [](Expr x) { return sum(2.0 * sin(x)); });
  const std::vector<Tensor> x = {tensor<double>({0.1, 0.2, 0.3})};
  const std::vector<double> by_block =
      compile(grad(loss("twice_sin_unregistered"))).run(x)[0].to_vector<double>();
  const std::vector<double> by_ops = compile(grad(fallback_loss)).run(x)[0].to_vector<double>();
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(by_block[i], by_ops[i], 1e-15) << "2 cos(x) at " << i;
  // A registered rule is used as it is, right or wrong: this one says 7.
  register_block_gradient("twice_sin_seven", [](const Tuple& args, const Tuple& outputs, const Tuple& cts) {
    EXPECT_EQ(args.size(), 1u);
    EXPECT_EQ(outputs.size(), 2u);
    EXPECT_TRUE(cts[0]);
    EXPECT_FALSE(cts[1]) << "the second output does not reach the loss";
    return std::vector<Expr>{broadcast(constant(7.0, DType::F64), Shape{3})};
  });
  const Function seven = grad(loss("twice_sin_seven"));
  EXPECT_EQ(compile(seven).run(x)[0].to_vector<double>(), (std::vector<double>{7, 7, 7}));
  register_block_gradient("twice_sin_wrong_count",
                          [](const Tuple&, const Tuple&, const Tuple&) { return std::vector<Expr>{}; });
  EXPECT_THROW_WITH(grad(loss("twice_sin_wrong_count")), ShapeError, "grad", "block 'twice_sin_wrong_count'",
                    "1 cotangents");
}

TEST(Block, SoftmaxAlongTheLastAxisIsTheBlock) {
  const auto top_op = [](Expr y) {
    return y.node()->op == Op::Result ? y.node()->operands[0]->op : y.node()->op;
  };
  EXPECT_EQ(top_op(softmax(arg(f32({4, 8})))), Op::Block);
  EXPECT_EQ(top_op(softmax(arg(f64({8})), 0)), Op::Block);
  EXPECT_NE(top_op(softmax(arg(f32({4, 8})), 0)), Op::Block) << "another axis: the ops";
  EXPECT_NE(top_op(softmax(arg(f16({4, 8})))), Op::Block) << "another dtype: the ops";
}

}  // namespace
}  // namespace sluice
