// Loops as graph nodes: what tracing makes of scan, while_loop and
// fori_loop (the body held by the node, captured values lifted into
// operands, hashing and CSE), and the errors that name the loop.

#include <gtest/gtest.h>

#include <sluice/ops/detail/loop_attrs.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/passes/passes.h>
#include <sluice/ops/detail/results.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

const Node& loop_of(const Expr& result) {
  EXPECT_EQ(result.node()->op, Op::Result);
  return *result.node()->operands.at(0);
}

TEST(LoopNode, ScanHoldsItsBodyAndResults) {
  const Expr xs = testing::arg(f32({6, 3}), 0), init = testing::arg(f32({3}), 1);
  const Tuple r = scan([](Expr c, Expr x) { return tuple(c + x, sum(x)); }, init, xs);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].spec(), f32({3}));
  EXPECT_EQ(r[1].spec(), f32({6}));
  const Node& loop = loop_of(r[0]);
  EXPECT_EQ(&loop, &loop_of(r[1]));
  EXPECT_EQ(loop.op, Op::ScanLoop);
  EXPECT_EQ(loop.spec, multi_result_spec());
  ASSERT_TRUE(loop.attrs.loop);
  const LoopAttrs& a = *loop.attrs.loop;
  EXPECT_EQ(a.carries, 1);
  EXPECT_EQ(a.xs, 1);
  EXPECT_EQ(a.length, 6);
  EXPECT_EQ(a.body.inputs(), (std::vector<Spec>{f32({3}), f32({3})})) << "carry, then one row of xs";
  EXPECT_EQ(a.body.output_specs(), (std::vector<Spec>{f32({3}), f32({})}));
  EXPECT_EQ(loop.operands.size(), 2u);
}

TEST(LoopNode, CapturedOuterValuesBecomeOperands) {
  const Expr w = testing::arg(f32({3}), 0), xs = testing::arg(f32({4, 3}), 1),
             init = testing::arg(f32({3}), 2);
  const Expr w2 = w * 2;
  const Tuple r = scan([&](Expr c, Expr x) { return c * w2 + x * w2 + 1; }, init, xs);
  const Node& loop = loop_of(r.at(0));
  ASSERT_EQ(loop.operands.size(), 3u) << "init, xs, then w * 2 lifted once";
  EXPECT_EQ(loop.operands[2], w2.node());
  const Function& body = loop.attrs.loop->body;
  EXPECT_EQ(body.inputs().size(), 3u);
  EXPECT_EQ(loop.attrs.loop->captured(), 1);
  // The body is self-contained: its only parameters are its own, and the constant 1 stays in it.
  EXPECT_EQ(body.str().find("parameter(3"), std::string::npos) << body.str();
  EXPECT_NE(body.str().find("constant(1)"), std::string::npos) << body.str();
}

TEST(LoopNode, EqualLoopsHashAlikeAndMerge) {
  auto make = [](double k) {
    return trace({f32({4})}, [k](Expr x) {
      return while_loop([](Expr c) { return sum(c) < 100; }, [k](Expr c) { return c * k + 1; }, x);
    });
  };
  EXPECT_TRUE(make(2) == make(2));
  EXPECT_EQ(make(2).hash(), make(2).hash());
  EXPECT_FALSE(make(2) == make(3)) << "bodies differ in a constant";
  EXPECT_NE(make(2).hash(), make(3).hash());

  const Function twice = trace({f32({4})}, [](Expr x) {
    auto once = [&] { return scan([](Expr c) { return c + 1; }, x, 3).at(0); };
    return once() + once();
  });
  const Function merged = passes::eliminate_common_subexpressions(twice);
  const Node& add = *merged.outputs()[0].node();
  EXPECT_EQ(add.operands[0], add.operands[1]) << "CSE merges equal loops and their results";
}

TEST(LoopNode, ForiLoopIsAScanCarryingTheIndex) {
  const Expr x = testing::arg(f32({}), 0);
  const Expr r = fori_loop(
      2, 7, [](Expr i, Expr c) { return c + as_type(i, DType::F32); }, x);
  const Node& loop = loop_of(r);
  EXPECT_EQ(loop.op, Op::ScanLoop);
  EXPECT_EQ(loop.attrs.loop->length, 5);
  EXPECT_EQ(loop.attrs.loop->body.inputs(), (std::vector<Spec>{s64({}), f32({})}));
  EXPECT_EQ(r.node()->attrs.index, 1) << "the index is carry 0; the user's carry follows";
}

TEST(LoopErrors, NameTheLoopTheArgumentAndTheSpecs) {
  const Expr xs = testing::arg(f32({5, 3}), 0), ys = testing::arg(s64({4}), 1);
  const Expr c = testing::arg(f32({3}), 2), n = testing::arg(s64({}), 3);
  EXPECT_THROW_WITH(scan([](Expr a, const Tuple& x) { return a + x[0]; }, c, Tuple{xs, ys}), ShapeError,
                    "scan: argument xs 1", "leading dim of 5", "s64[4]");
  EXPECT_THROW_WITH(scan([](Expr a, Expr) { return a; }, c, n), ShapeError, "scan: argument xs 0",
                    "rank >= 1", "found s64");
  EXPECT_THROW_WITH(scan([](Expr a, Expr x) { return sum(a + x); }, c, xs), ShapeError,
                    "scan: argument f's new carry 0", "expected f32[3] (as init 0)", "found f32");
  EXPECT_THROW_WITH(scan([](Expr a, Expr x) { return as_type(a + x, DType::F64); }, c, xs), TypeError,
                    "scan: argument f's new carry 0", "f32[3]", "found f64[3]");
  EXPECT_THROW_WITH(scan([](const Tuple& a, Expr) { return a[0]; }, Tuple{c, n}, xs), ShapeError,
                    "scan: argument f's result", "2 tensors", "found 1");
  EXPECT_THROW_WITH(scan([](Expr a) { return a; }, c, -1), ShapeError, "scan: argument length", ">= 0", "-1");
  EXPECT_THROW_WITH(while_loop([](Expr a) { return a; }, [](Expr a) { return a + 1; }, n), TypeError,
                    "while_loop: argument cond", "a pred scalar", "found s64");
  EXPECT_THROW_WITH(while_loop([](Expr a) { return a > 0; }, [](Expr a) { return a + 1; }, c), ShapeError,
                    "while_loop: argument cond", "a pred scalar", "found pred[3]");
  EXPECT_THROW_WITH(
      while_loop([](Expr a) { return a < 3; }, [](Expr a) { return as_type(a, DType::S32); }, n), TypeError,
      "while_loop: argument body's new carry 0", "expected s64 (as init 0)", "found s32");
  EXPECT_THROW_WITH(fori_loop(
                        0, 3, [](Expr i, Expr a) { return a + as_type(i, DType::F64); }, c),
                    TypeError, "fori_loop: argument body's new carry 0", "f32[3]", "found f64[3]");
}

TEST(LoopErrors, WeakNumbersTakeTheCarrysType) {
  // A body returning a plain number for the carry keeps the carry's dtype, as `c + 1` would.
  const Expr n = testing::arg(s32({}), 0);
  const Expr r = while_loop([](Expr a) { return a < 3; }, [](Expr) { return weak_scalar(int64_t{5}); }, n);
  EXPECT_EQ(r.spec(), s32({}));
}

}  // namespace
}  // namespace sluice
