// dot: the general contraction and Nx's dot/2 conveniences.
#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;
using testing::weak;

TEST(Dot, BatchThenFreeAxesOfAThenB) {
  const Expr d = dot(arg(f32({8, 2, 3})), {2}, {0}, arg(f32({8, 3, 4}), 1), {1}, {0});
  EXPECT_EQ(d.spec(), f32({8, 2, 4}));
  const Attrs& a = d.node()->attrs;
  EXPECT_EQ(a.contract_a, (std::vector<int64_t>{2}));
  EXPECT_EQ(a.batch_a, (std::vector<int64_t>{0}));
  EXPECT_EQ(a.contract_b, (std::vector<int64_t>{1}));
  EXPECT_EQ(a.batch_b, (std::vector<int64_t>{0}));
  EXPECT_EQ(dot(arg(f32({3, 5, 2})), {0}, {}, arg(f32({3, 7}), 1), {0}, {}).spec(), f32({5, 2, 7}));
  EXPECT_EQ(dot(arg(f32({2, 3})), {}, {}, arg(f32({4}), 1), {}, {}).spec(), f32({2, 3, 4}))
      << "outer product";
  EXPECT_EQ(dot(arg(f32({2, 3})), {-1}, {}, arg(f32({3}), 1), {-1}, {}).node()->attrs.contract_a,
            (std::vector<int64_t>{1}));
}

TEST(Dot, OperandsAreConvertedToTheMergedType) {
  const Expr d = dot(arg(s32({2, 3})), {1}, {}, arg(f32({3}), 1), {0}, {});
  EXPECT_EQ(d.spec(), f32({2}));
  EXPECT_EQ(d.node()->operands.at(0)->op, Op::AsType);
  EXPECT_EQ(dot(arg(pred({3})), arg(pred({3}), 1)).dtype(), DType::U8) << "pred computes in u8";
  EXPECT_EQ(dot(arg(f64({3})), arg(c64({3}), 1)).dtype(), DType::C128);
}

TEST(Dot, NxDot2) {
  EXPECT_EQ(dot(arg(f32({3})), arg(f32({3}), 1)).spec(), f32()) << "vector . vector";
  EXPECT_EQ(dot(arg(f32({2, 3})), arg(f32({3}), 1)).spec(), f32({2})) << "matrix . vector";
  EXPECT_EQ(dot(arg(f32({3})), arg(f32({3, 4}), 1)).spec(), f32({4})) << "vector . matrix";
  EXPECT_EQ(dot(arg(f32({2, 3})), arg(f32({3, 4}), 1)).spec(), f32({2, 4})) << "matrix . matrix";
  const Expr t = dot(arg(f32({2, 3, 4})), arg(f32({5, 4, 6}), 1));
  EXPECT_EQ(t.spec(), f32({2, 3, 5, 6})) << "a's last axis with b's second to last";
  EXPECT_EQ(t.node()->attrs.contract_b, (std::vector<int64_t>{1}));
  const Expr s = dot(arg(f32({2, 3})), weak(2.0));
  EXPECT_EQ(s.spec(), f32({2, 3})) << "a scalar scales";
  EXPECT_EQ(s.node()->op, Op::Multiply);
}

TEST(Dot, Errors) {
  EXPECT_THROW_WITH(dot(arg(f32({2, 3})), arg(f32({4, 5}), 1)), ShapeError, "dot", "contract_b", "size 3",
                    "4");
  EXPECT_THROW_WITH(dot(arg(f32({2, 3})), {1, 1}, {}, arg(f32({3, 3}), 1), {0, 1}, {}), ShapeError, "dot",
                    "contract_a", "repeated");
  EXPECT_THROW_WITH(dot(arg(f32({2, 3})), {1}, {1}, arg(f32({3, 3}), 1), {0}, {1}), ShapeError, "dot",
                    "batch_a", "repeated");
  EXPECT_THROW_WITH(dot(arg(f32({2, 3})), {1}, {0}, arg(f32({3}), 1), {0}, {}), ShapeError, "dot", "batch_b",
                    "1 axes");
  EXPECT_THROW_WITH(dot(arg(f32({2, 3})), {1}, {}, arg(f32({3, 2}), 1), {0, 1}, {}), ShapeError, "dot",
                    "contract_b", "1 axes", "2");
  EXPECT_THROW_WITH(dot(arg(f32({2, 3})), {2}, {}, arg(f32({3}), 1), {0}, {}), ShapeError, "dot",
                    "contract_a", "2");
  EXPECT_THROW_WITH(dot(arg(f32({4, 2})), {}, {0}, arg(f32({3, 2}), 1), {}, {0}), ShapeError, "dot",
                    "batch_b", "size 4", "3");
  const Spec r9{DType::F32, Shape(std::vector<int64_t>(9, 1))};
  EXPECT_THROW_WITH(dot(arg(r9), {}, {}, arg(r9, 1), {}, {}), ShapeError, "dot", "rank at most 16",
                    "rank 18");
  EXPECT_THROW_WITH(dot(Expr(), arg(f32({3}), 1)), Error, "dot", "argument a");
}

}  // namespace
}  // namespace sluice
