#include <sluice/ops/expr.h>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "ops_test_util.h"

namespace sluice {
namespace {

NodePtr param(int64_t index, const Spec& spec) {
  Attrs a;
  a.index = index;
  return Node::make(Op::Parameter, spec, {}, a);
}

TEST(Attrs, EveryFieldTakesPartInEqualityAndHash) {
  const std::vector<std::pair<const char*, std::function<void(Attrs&)>>> changes = {
      {"axes", [](Attrs& a) { a.axes = {1}; }},
      {"dims", [](Attrs& a) { a.dims = {2}; }},
      {"starts", [](Attrs& a) { a.starts = {0}; }},
      {"lengths", [](Attrs& a) { a.lengths = {3}; }},
      {"strides", [](Attrs& a) { a.strides = {1}; }},
      {"padding",
       [](Attrs& a) {
         a.padding = {PadDim{0, 1, 0}};
       }},
      {"contract_a", [](Attrs& a) { a.contract_a = {0}; }},
      {"batch_a", [](Attrs& a) { a.batch_a = {0}; }},
      {"contract_b", [](Attrs& a) { a.contract_b = {0}; }},
      {"batch_b", [](Attrs& a) { a.batch_b = {0}; }},
      {"axis", [](Attrs& a) { a.axis = 0; }},
      {"index", [](Attrs& a) { a.index = 1; }},
      {"dtype", [](Attrs& a) { a.dtype = DType::S8; }},
      {"keep_axes", [](Attrs& a) { a.keep_axes = true; }},
      {"reverse", [](Attrs& a) { a.reverse = true; }},
      {"weak", [](Attrs& a) { a.weak = true; }},
      {"tie_break", [](Attrs& a) { a.tie_break = TieBreak::High; }},
      {"literal",
       [](Attrs& a) { a.literal = std::make_shared<const Literal>(Literal::scalar(DType::F32, 1.0)); }},
  };
  const Attrs base;
  for (const auto& [field, change] : changes) {
    Attrs changed;
    change(changed);
    EXPECT_FALSE(changed == base) << "a change of " << field << " must make attrs unequal";
    EXPECT_NE(changed.hash(), base.hash()) << "a change of " << field << " must change the hash";
    Attrs again;
    change(again);
    EXPECT_TRUE(changed == again) << field;
    EXPECT_EQ(changed.hash(), again.hash()) << field;
  }
}

TEST(Attrs, LiteralsCompareByValueNotByPointer) {
  Attrs a, b, c;
  a.literal = std::make_shared<const Literal>(Literal::scalar(DType::F32, 2.0));
  b.literal = std::make_shared<const Literal>(Literal::scalar(DType::F32, 2.0));
  c.literal = std::make_shared<const Literal>(Literal::scalar(DType::F32, 3.0));
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_FALSE(a == c);
  EXPECT_NE(a.hash(), c.hash());
  Attrs d;
  d.literal = std::make_shared<const Literal>(Literal::scalar(DType::F64, 2.0));
  EXPECT_FALSE(a == d) << "same value, other dtype";
}

TEST(Node, HashCoversOpSpecAttrsAndOperands) {
  const NodePtr x = param(0, f32({3}));
  const NodePtr y = param(1, f32({3}));
  const NodePtr add = Node::make(Op::Add, f32({3}), {x, y});
  EXPECT_EQ(add->hash, Node::make(Op::Add, f32({3}), {param(0, f32({3})), param(1, f32({3}))})->hash)
      << "separately made, structurally equal nodes hash alike";
  EXPECT_NE(add->hash, Node::make(Op::Subtract, f32({3}), {x, y})->hash) << "op";
  EXPECT_NE(add->hash, Node::make(Op::Add, f64({3}), {x, y})->hash) << "dtype";
  EXPECT_NE(add->hash, Node::make(Op::Add, f32({1, 3}), {x, y})->hash) << "shape";
  EXPECT_NE(add->hash, Node::make(Op::Add, f32({3}), {y, x})->hash) << "operand order";
  EXPECT_NE(x->hash, y->hash) << "parameters differ by index";
  Attrs weak;
  weak.weak = true;
  EXPECT_NE(add->hash, Node::make(Op::Add, f32({3}), {x, y}, weak)->hash) << "attrs";
}

TEST(Node, MakeChecksArityAndOperands) {
  const NodePtr x = param(0, f32({3}));
  EXPECT_THROW_WITH(Node::make(Op::Add, f32({3}), {x}), Error, "add", "2 operands", "found 1");
  EXPECT_THROW_WITH(Node::make(Op::Negate, f32({3}), {nullptr}), Error, "negate", "operand 0");
  EXPECT_NO_THROW(Node::make(Op::Concatenate, f32({6}), {x, x})) << "variadic";
}

TEST(StructurallyEqual, ComparesWholeSubgraphs) {
  const NodePtr a = Node::make(Op::Exp, f32({3}), {param(0, f32({3}))});
  const NodePtr b = Node::make(Op::Exp, f32({3}), {param(0, f32({3}))});
  const NodePtr c = Node::make(Op::Exp, f32({3}), {param(1, f32({3}))});
  EXPECT_TRUE(structurally_equal(*a, *b));
  EXPECT_TRUE(structurally_equal(*a, *a));
  EXPECT_FALSE(structurally_equal(*a, *c));
  EXPECT_TRUE(structurally_equal(std::vector<NodePtr>{a, c}, std::vector<NodePtr>{b, c}));
  EXPECT_FALSE(structurally_equal(std::vector<NodePtr>{a, c}, std::vector<NodePtr>{c, a}));
  EXPECT_FALSE(structurally_equal(std::vector<NodePtr>{a}, std::vector<NodePtr>{a, a}));
}

// x_{i+1} = x_i + x_i, n times: 2^n paths through n + 1 nodes.
NodePtr doubling_chain(int n) {
  NodePtr x = param(0, f32({4}));
  for (int i = 0; i < n; ++i) x = Node::make(Op::Add, f32({4}), {x, x});
  return x;
}

TEST(StructurallyEqual, SharedSubgraphsAreComparedOnce) {
  const NodePtr a = doubling_chain(200);
  const NodePtr b = doubling_chain(200);
  ASSERT_NE(a.get(), b.get());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(structurally_equal(*a, *b));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0) << "2^200 paths: only memoisation makes this finish";
}

TEST(StructurallyEqual, LongChainsDoNotRecurse) {
  NodePtr a = param(0, f32({}));
  NodePtr b = param(0, f32({}));
  for (int i = 0; i < 20000; ++i) {
    a = Node::make(Op::Negate, f32({}), {a});
    b = Node::make(Op::Negate, f32({}), {b});
  }
  EXPECT_TRUE(structurally_equal(*a, *b));
}

}  // namespace
}  // namespace sluice
