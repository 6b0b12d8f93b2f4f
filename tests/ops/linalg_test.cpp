// The linear algebra builders: result specs, dtypes, the node with several
// results and its result nodes, and the errors that name the op and the
// argument. Values are checked by the conformance suite and
// tests/devices/linalg_test.cpp.

#include <gtest/gtest.h>

#include <sluice/ops/ops.h>
#include <sluice/ops/passes/graph_walk.h>
#include <sluice/ops/passes/passes.h>
#include <sluice/ops/detail/results.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using testing::arg;

TEST(LinAlgBuilders, ResultSpecs) {
  EXPECT_EQ(cholesky(arg(f32({8, 4, 4}))).spec(), f32({8, 4, 4}));
  EXPECT_EQ(solve(arg(f64({3, 3})), arg(f64({3}), 1)).spec(), f64({3}));
  EXPECT_EQ(triangular_solve(arg(c64({2, 3, 3})), arg(c64({2, 5, 3}), 1), {.left_side = false}).spec(),
            c64({2, 5, 3}));
  const Qr reduced = qr(arg(f32({5, 3})));
  EXPECT_EQ(reduced.q.spec(), f32({5, 3}));
  EXPECT_EQ(reduced.r.spec(), f32({3, 3}));
  const Qr complete = qr(arg(f32({2, 5, 3})), {.mode = QrMode::Complete});
  EXPECT_EQ(complete.q.spec(), f32({2, 5, 5}));
  EXPECT_EQ(complete.r.spec(), f32({2, 5, 3}));
  const Qr wide = qr(arg(f64({2, 4})));
  EXPECT_EQ(wide.q.spec(), f64({2, 2}));
  EXPECT_EQ(wide.r.spec(), f64({2, 4}));
  const Lu f = lu(arg(f64({2, 4, 4})));
  EXPECT_EQ(f.p.spec(), s64({2, 4, 4})) << "p is an s64 permutation matrix, as Nx's";
  EXPECT_EQ(f.l.spec(), f64({2, 4, 4}));
  EXPECT_EQ(f.u.spec(), f64({2, 4, 4}));
  const Eigh e = eigh(arg(c64({0, 3, 3})));
  EXPECT_EQ(e.eigenvalues.spec(), f32({0, 3})) << "eigenvalues are real";
  EXPECT_EQ(e.eigenvectors.spec(), c64({0, 3, 3}));
}

TEST(LinAlgBuilders, IntegersComputeInF32AndOperandsMerge) {
  EXPECT_EQ(cholesky(arg(s32({3, 3}))).spec(), f32({3, 3}));
  EXPECT_EQ(qr(arg(s64({3, 3}))).q.dtype(), DType::F32);
  EXPECT_EQ(solve(arg(f32({3, 3})), arg(f64({3}), 1)).dtype(), DType::F64);
  EXPECT_EQ(triangular_solve(arg(f32({3, 3})), arg(c64({3}), 1)).dtype(), DType::C64);
}

TEST(LinAlgBuilders, SeveralResultsShareOneNode) {
  const Expr a = arg(f64({4, 4}));
  const Lu f = lu(a);
  for (const Expr& r : {f.p, f.l, f.u}) ASSERT_EQ(r.node()->op, Op::Result);
  const Node& node = *f.p.node()->operands.at(0);
  EXPECT_EQ(node.op, Op::Lu);
  EXPECT_EQ(node.spec, multi_result_spec());
  EXPECT_EQ(f.l.node()->operands.at(0).get(), &node);
  EXPECT_EQ(f.u.node()->attrs.index, 2);
  EXPECT_EQ(result_specs(node), (std::vector<Spec>{s64({4, 4}), f64({4, 4}), f64({4, 4})}));
}

TEST(LinAlgBuilders, CseMergesEqualNodesAndTheirResults) {
  Function f = trace({f32({3, 3})}, [](Expr a) { return tuple(qr(a).q, qr(a).q + qr(a).r); });
  Function g = passes::eliminate_common_subexpressions(f);
  const Node* q0 = g.outputs()[0].node().get();
  EXPECT_EQ(q0, g.outputs()[1].node()->operands[0].get()) << g.str();
  EXPECT_EQ(q0->operands[0].get(), g.outputs()[1].node()->operands[1]->operands[0].get()) << g.str();
}

TEST(LinAlgBuilders, ErrorsNameTheOpTheArgumentAndWhatWasFound) {
  EXPECT_THROW_WITH(cholesky(arg(f32({3, 4}))), ShapeError, "cholesky", "argument a", "square", "f32[3][4]");
  EXPECT_THROW_WITH(eigh(arg(f32({3}))), ShapeError, "eigh", "rank >= 2", "f32[3]");
  EXPECT_THROW_WITH(qr(arg(f32({}))), ShapeError, "qr", "rank >= 2", "found f32");
  EXPECT_THROW_WITH(lu(arg(f64({2, 3}))), ShapeError, "lu", "f64[2][3]");
  EXPECT_THROW_WITH(cholesky(arg(f16({3, 3}))), TypeError, "cholesky", "LAPACK", "f16");
  EXPECT_THROW_WITH(solve(arg(bf16({3, 3})), arg(bf16({3}), 1)), TypeError, "solve", "a and b", "bf16");
  EXPECT_THROW_WITH(solve(arg(f32({2, 3, 3})), arg(f32({3, 3}), 1)), ShapeError, "solve", "argument b",
                    "batch dims", "f32[3][3]");
  EXPECT_THROW_WITH(solve(arg(f32({2, 3, 3})), arg(f32({2, 4}), 1)), ShapeError, "solve", "argument b",
                    "3 in its last dim", "f32[2][4]");
  EXPECT_THROW_WITH(solve(arg(f32({3, 3})), arg(f32({4, 2}), 1)), ShapeError, "solve", "3 in its rows",
                    "f32[4][2]");
  EXPECT_THROW_WITH(triangular_solve(arg(f32({3, 3})), arg(f32({3, 2}), 1), {.left_side = false}), ShapeError,
                    "triangular_solve", "3 in its columns", "f32[3][2]");
  EXPECT_THROW_WITH(triangular_solve(arg(f32({3, 3})), arg(f32({1, 1, 3}), 1)), ShapeError,
                    "triangular_solve", "rank 1 or a matrix of rank 2", "f32[1][1][3]");
  EXPECT_THROW_WITH(cholesky(Expr()), Error, "cholesky", "a");
}

TEST(LinAlgGrad, LusPermutationPassesNoneAndWideQrIsRefused) {
  Function f = trace({f64({3, 3})}, [](Expr a) { return sum(as_type(lu(a).p, DType::F64)) + sum(a); });
  EXPECT_TRUE(is_differentiable(Op::Lu));
  for (const NodePtr& node : passes::topological_order(grad(f).outputs()))
    EXPECT_NE(node->op, Op::Lu) << "p is an integer: no cotangent reaches lu's rule";
  Function wide = trace({f64({2, 3})}, [](Expr a) { return sum(qr(a).r); });
  EXPECT_THROW_WITH(grad(wide), ShapeError, "grad", "qr of f64[2][3]", "at least as many rows");
}

}  // namespace
}  // namespace sluice
