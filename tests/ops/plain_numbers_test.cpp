// Plain C++ numbers where ops take Exprs, and functions of many arguments:
// what a user writes without thinking should compile and mean what it says.

#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;

// A number becomes a weak scalar: the result keeps the tensor's type.
void expect_weak_operand(Expr e, int operand, Op op) {
  ASSERT_EQ(e.node()->op, op) << op_name(e.node()->op);
  const Node* n = e.node()->operands.at(static_cast<size_t>(operand)).get();
  while (n->op == Op::Broadcast || n->op == Op::AsType) n = n->operands[0].get();  // to the tensor's shape and type
  EXPECT_EQ(n->op, Op::Constant) << "operand " << operand << ": " << op_name(n->op);
  EXPECT_EQ(n->spec.shape.rank(), 0) << "operand " << operand << " is a scalar";
}

TEST(PlainNumbers, OperatorsTakeAnyArithmeticType) {
  Expr x = arg(f32({3}));
  const int64_t n = 2;
  const unsigned u = 3;
  const float h = 0.5f;
  for (Expr e : {x / n, n / x, x * u, x - h, h + x}) {
    EXPECT_EQ(e.spec(), f32({3})) << "a number takes the tensor's type";
  }
  expect_weak_operand(x / n, 1, Op::Divide);
  expect_weak_operand(u * x, 0, Op::Multiply);
  EXPECT_EQ((arg(s32({2})) << 1).spec(), s32({2}));
}

TEST(PlainNumbers, NamedBinaryOpsAndClipTakeNumbers) {
  Expr x = arg(f64({4}));
  expect_weak_operand(max(x, 0.0), 1, Op::Max);
  expect_weak_operand(min(1, x), 0, Op::Min);
  expect_weak_operand(pow(x, 2), 1, Op::Pow);
  expect_weak_operand(atan2(x, 1.0f), 1, Op::Atan2);
  EXPECT_EQ(less(x, int64_t{3}).spec(), pred({4}));
  Expr c = clip(x, 0, 1.5);
  EXPECT_EQ(c.node()->op, Op::Clip);
  EXPECT_EQ(c.spec(), f64({4}));
}

TEST(PlainNumbers, TraceTakesManySeparateArguments) {
  std::vector<Spec> specs(9, f32({2}));
  Function f = trace(specs, [](Expr a, Expr b, Expr c, Expr d, Expr e, Expr g, Expr h, Expr i, Expr j) {
    return a + b + c + d + e + g + h + i + j;
  });
  EXPECT_EQ(f.inputs().size(), 9u);
  EXPECT_THROW(trace(std::vector<Spec>(8, f32({2})),
                     [](Expr a, Expr b, Expr c, Expr d, Expr e, Expr g, Expr h, Expr i, Expr j) {
                       return a + b + c + d + e + g + h + i + j;
                     }),
               Error)
      << "as many specs as the function takes";
}

}  // namespace
}  // namespace sluice
