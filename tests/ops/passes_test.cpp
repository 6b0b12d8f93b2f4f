// Graph passes (ops/passes/passes.h): common subexpressions, constant
// folding, and scheduling into steps with fused elementwise regions.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <sluice/ops/ops.h>
#include <sluice/ops/passes/passes.h>
#include "ops_test_util.h"

namespace sluice {
namespace {

using passes::WorkUnit;

// Every node reachable from f's outputs, operands first (an independent walk,
// so the passes are not checked against their own).
std::vector<const Node*> nodes_of(const Function& f) {
  std::vector<const Node*> order;
  std::unordered_set<const Node*> seen;
  std::vector<std::pair<const Node*, size_t>> stack;
  for (const Expr& out : f.outputs()) {
    if (!seen.insert(out.node().get()).second) continue;
    stack.emplace_back(out.node().get(), 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->operands.size()) {
        const Node* operand = node->operands[next++].get();
        if (seen.insert(operand).second) stack.emplace_back(operand, 0);
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

size_t count(const Function& f, Op op) {
  auto nodes = nodes_of(f);
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [op](const Node* n) { return n->op == op; }));
}

const Node& out(const Function& f, size_t i = 0) { return *f.outputs()[i].node(); }

// ---- common subexpressions

TEST(Cse, RepeatedSubexpressionIsComputedOnce) {
  Function f = trace({f32({8})}, [](Expr x) { return (x * 2.0 + 1.0) * (x * 2.0 + 1.0); });
  ASSERT_EQ(count(f, Op::Add), 2u) << "the traced graph builds x*2+1 twice:\n" << f.str();

  Function g = passes::eliminate_common_subexpressions(f);
  EXPECT_EQ(count(g, Op::Add), 1u) << g.str();
  EXPECT_EQ(count(g, Op::Multiply), 2u) << "x*2 once and the product:\n" << g.str();
  EXPECT_EQ(count(g, Op::Constant), 2u) << "equal constants (2.0 twice, 1.0 twice) merge:\n" << g.str();
  EXPECT_EQ(out(g).operands[0], out(g).operands[1]) << "both factors are one node";
  EXPECT_EQ(g.inputs(), f.inputs());
  EXPECT_EQ(g.output_specs(), f.output_specs());
}

TEST(Cse, CommutativeOperandsInEitherOrderAreEqual) {
  Function f = trace({f32({4}), f32({4})}, [](Expr a, Expr b) { return (a + b) * (b + a); });
  Function g = passes::eliminate_common_subexpressions(f);
  EXPECT_EQ(count(g, Op::Add), 1u) << "a+b and b+a are one value:\n" << g.str();
  EXPECT_EQ(out(g).operands[0], out(g).operands[1]);

  // Merging b+a into a+b makes their users equal too.
  Function h = trace({f32({4}), f32({4})}, [](Expr a, Expr b) { return exp(a * b) - exp(b * a); });
  Function k = passes::eliminate_common_subexpressions(h);
  EXPECT_EQ(count(k, Op::Exp), 1u) << k.str();
}

TEST(Cse, DistinctValuesStayDistinct) {
  Function f = trace({f32({4}), f32({4})}, [](Expr a, Expr b) {
    return tuple((a - b) * (b - a), a + b, (a + constant(1.0, DType::F32)) * (a + constant(2.0, DType::F32)));
  });
  Function g = passes::eliminate_common_subexpressions(f);
  EXPECT_EQ(count(g, Op::Subtract), 2u) << "subtract is not commutative:\n" << g.str();
  EXPECT_EQ(count(g, Op::Parameter), 2u) << "parameters 0 and 1 share a spec but are different inputs";
  EXPECT_EQ(count(g, Op::Add), 3u) << "a+b, a+1, a+2:\n" << g.str();
  EXPECT_EQ(count(g, Op::Constant), 2u) << "constants 1 and 2 differ in their bytes";
}

TEST(Cse, FunctionWithoutRepeatsIsUnchanged) {
  Function f = trace({f32({4})}, [](Expr x) { return tanh(x) + x; });
  Function g = passes::eliminate_common_subexpressions(f);
  EXPECT_EQ(g.outputs()[0].node(), f.outputs()[0].node()) << "nothing to merge: nothing rebuilt";
  EXPECT_EQ(g, f);
}

// ---- constant folding

double read(const Literal& l, int64_t i) {
  if (l.spec.dtype == DType::F64) {
    double v;
    std::memcpy(&v, l.bytes.data() + i * 8, 8);
    return v;
  }
  float v;
  std::memcpy(&v, l.bytes.data() + i * 4, 4);
  return v;
}

void write(Literal& l, int64_t i, double v) {
  if (l.spec.dtype == DType::F64) {
    std::memcpy(l.bytes.data() + i * 8, &v, 8);
    return;
  }
  const float f = static_cast<float>(v);
  std::memcpy(l.bytes.data() + i * 4, &f, 4);
}

// A stand-in for a backend's evaluator: f32/f64 add, multiply, negate,
// broadcast of a scalar and 1-d iota. Counts its calls.
struct FakeEvaluator {
  int* calls;
  Literal operator()(const Node& node, const std::vector<const Literal*>& args) const {
    ++*calls;
    if (node.spec.dtype != DType::F32 && node.spec.dtype != DType::F64) {
      throw ValueError("fake evaluator: expected f32 or f64, found " + node.spec.str());
    }
    Literal result{node.spec, std::vector<uint8_t>(static_cast<size_t>(node.spec.bytes()))};
    for (int64_t i = 0; i < node.spec.size(); ++i) {
      double v = 0;
      switch (node.op) {
        case Op::Add: v = read(*args[0], i) + read(*args[1], i); break;
        case Op::Multiply: v = read(*args[0], i) * read(*args[1], i); break;
        case Op::Negate: v = -read(*args[0], i); break;
        case Op::Broadcast: v = read(*args[0], 0); break;
        case Op::Iota: v = static_cast<double>(i); break;
        default:
          throw ValueError("fake evaluator: op " + std::string(op_name(node.op)) + " is not implemented");
      }
      write(result, i, v);
    }
    return result;
  }
};

TEST(Fold, ConstantChainsBecomeOneConstant) {
  Function f = trace({f32({})}, [](Expr x) {
    Expr c = (constant(1.0, DType::F32) + constant(2.0, DType::F32)) * constant(3.0, DType::F32);
    return x + (-c);
  });
  int calls = 0;
  Function g = passes::fold_constants(f, FakeEvaluator{&calls});
  EXPECT_EQ(calls, 3) << "add, multiply, negate evaluated once each";
  ASSERT_EQ(out(g).op, Op::Add) << "x + ... stays computed:\n" << g.str();
  EXPECT_EQ(out(g).operands[0]->op, Op::Parameter);
  const Node& c = *out(g).operands[1];
  ASSERT_EQ(c.op, Op::Constant) << g.str();
  EXPECT_EQ(c.spec, f32({}));
  EXPECT_EQ(read(*c.attrs.literal, 0), -9.0) << "-((1 + 2) * 3)";
  EXPECT_FALSE(c.attrs.weak) << "a folded value is strong";
}

TEST(Fold, WeakOperandsGiveAStrongResult) {
  Function f = trace({}, [] { return weak_scalar(1.5) + weak_scalar(2.25); });
  ASSERT_TRUE(out(f).attrs.weak) << "arithmetic on plain numbers is weak when traced:\n" << f.str();
  int calls = 0;
  Function g = passes::fold_constants(f, FakeEvaluator{&calls});
  ASSERT_EQ(out(g).op, Op::Constant) << g.str();
  EXPECT_FALSE(out(g).attrs.weak);
  EXPECT_EQ(read(*out(g).attrs.literal, 0), 3.75);
}

TEST(Fold, ParametersAreNeverFolded) {
  Function f = trace({f32({})}, [](Expr x) { return -(x + constant(1.0, DType::F32)); });
  int calls = 0;
  Function g = passes::fold_constants(f, FakeEvaluator{&calls});
  EXPECT_EQ(calls, 0) << "no node has only constant operands";
  EXPECT_EQ(g.outputs()[0].node(), f.outputs()[0].node()) << "nothing folded: nothing rebuilt";
}

TEST(Fold, ResultsLargerThanMaxElementsStayComputed) {
  Function f = trace({}, [] { return broadcast(constant(2.0, DType::F32), Shape{4}); });
  int calls = 0;
  Function kept = passes::fold_constants(f, FakeEvaluator{&calls}, 3);
  EXPECT_EQ(out(kept).op, Op::Broadcast) << "4 elements > max_elements 3";
  EXPECT_EQ(calls, 0);

  Function folded = passes::fold_constants(f, FakeEvaluator{&calls}, 4);
  ASSERT_EQ(out(folded).op, Op::Constant) << "4 elements <= max_elements 4";
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(read(*out(folded).attrs.literal, i), 2.0) << "element " << i;

  Function large = trace({}, [] { return broadcast(constant(0.0, DType::F32), Shape{4096, 4096}); });
  EXPECT_EQ(out(passes::fold_constants(large, FakeEvaluator{&calls})).op, Op::Broadcast)
      << "16M elements are not folded at the default bound";
}

TEST(Fold, SmallIotaBecomesAConstant) {
  Function f = trace({}, [] { return iota(f32({5})); });
  int calls = 0;
  Function g = passes::fold_constants(f, FakeEvaluator{&calls});
  ASSERT_EQ(out(g).op, Op::Constant);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(read(*out(g).attrs.literal, i), static_cast<double>(i));
  EXPECT_EQ(out(passes::fold_constants(f, FakeEvaluator{&calls}, 4)).op, Op::Iota) << "5 elements > 4";
}

TEST(Fold, EvaluatorReturningTheWrongSpecIsAnError) {
  Function f = trace({}, [] { return constant(1.0, DType::F32) + constant(2.0, DType::F32); });
  auto wrong = [](const Node&, const std::vector<const Literal*>&) { return Literal::scalar(DType::F64, 3.0); };
  EXPECT_THROW_WITH(passes::fold_constants(f, wrong), Error, "fold_constants", "add", "f32", "f64");
}

// ---- scheduling

bool is_fusible(const Node& n) { return is_elementwise(n.op) || n.op == Op::Broadcast; }
bool is_leaf_input(const Node& n) { return n.op == Op::Parameter || n.op == Op::Constant; }

std::string describe(const Node* n) { return std::string(op_name(n->op)) + " " + n->spec.str(); }

// Checks the contract of schedule(f): every computed node in exactly one
// step, steps in an order that respects every dependency, inputs and outputs
// complete and without duplicates, regions made only of what may be fused.
void expect_valid_schedule(const Function& f, const std::vector<WorkUnit>& steps) {
  const std::vector<const Node*> nodes = nodes_of(f);
  std::unordered_map<const Node*, size_t> step_of;
  for (size_t s = 0; s < steps.size(); ++s) {
    for (const Node* n : steps[s].nodes) {
      EXPECT_FALSE(is_leaf_input(*n)) << "step " << s << " computes a " << describe(n);
      EXPECT_TRUE(step_of.emplace(n, s).second) << describe(n) << " is in two steps";
    }
  }
  for (const Node* n : nodes) {
    EXPECT_TRUE(is_leaf_input(*n) || step_of.count(n)) << describe(n) << " is in no step";
  }
  std::unordered_map<const Node*, std::vector<const Node*>> users;
  for (const Node* n : nodes) {
    for (const NodePtr& o : n->operands) users[o.get()].push_back(n);
  }
  std::unordered_set<const Node*> function_outputs;
  for (const Expr& e : f.outputs()) function_outputs.insert(e.node().get());

  std::unordered_set<const Node*> available;  // outputs of steps done so far
  for (size_t s = 0; s < steps.size(); ++s) {
    const WorkUnit& step = steps[s];
    std::unordered_set<const Node*> inside(step.nodes.begin(), step.nodes.end());
    std::unordered_set<const Node*> inputs(step.inputs.begin(), step.inputs.end());
    EXPECT_EQ(inputs.size(), step.inputs.size()) << "step " << s << " lists an input twice";
    std::unordered_set<const Node*> done, read;
    for (const Node* n : step.nodes) {
      for (const NodePtr& o : n->operands) {
        if (inside.count(o.get())) {
          EXPECT_TRUE(done.count(o.get())) << "step " << s << ": " << describe(n) << " before its operand";
          continue;
        }
        read.insert(o.get());
        EXPECT_TRUE(inputs.count(o.get())) << "step " << s << ": operand " << describe(o.get()) << " not an input";
      }
      done.insert(n);
    }
    for (const Node* in : step.inputs) {
      EXPECT_TRUE(read.count(in)) << "step " << s << ": input " << describe(in) << " is never read";
      EXPECT_TRUE(is_leaf_input(*in) || available.count(in))
          << "step " << s << " reads " << describe(in) << " before a step computes it";
    }
    std::unordered_set<const Node*> outputs(step.outputs.begin(), step.outputs.end());
    EXPECT_EQ(outputs.size(), step.outputs.size()) << "step " << s << " lists an output twice";
    for (const Node* n : step.nodes) {
      bool needed = function_outputs.count(n) > 0;
      for (const Node* u : users[n]) needed |= !inside.count(u);
      EXPECT_EQ(outputs.count(n) > 0, needed) << "step " << s << ": " << describe(n)
                                              << (needed ? " is needed outside but not an output"
                                                         : " is an output nobody outside needs");
    }
    if (step.fused) {
      bool any_elementwise = false;
      for (const Node* n : step.nodes) {
        EXPECT_TRUE(is_fusible(*n)) << "step " << s << " fuses a " << describe(n);
        EXPECT_EQ(n->spec.shape, step.nodes.front()->spec.shape) << "step " << s << " mixes shapes";
        if (n->op == Op::Broadcast) {
          EXPECT_FALSE(inside.count(n->operands[0].get()))
              << "step " << s << " broadcasts a value it computes itself";
        }
        any_elementwise |= is_elementwise(n->op);
      }
      EXPECT_TRUE(any_elementwise) << "step " << s << " is fused but computes nothing elementwise";
    } else {
      EXPECT_EQ(step.nodes.size(), 1u) << "step " << s << " is not fused but has several nodes";
    }
    available.insert(step.outputs.begin(), step.outputs.end());
  }
}

std::vector<const Node*> non_constant(const std::vector<const Node*>& v) {
  std::vector<const Node*> r;
  for (const Node* n : v) {
    if (n->op != Op::Constant) r.push_back(n);
  }
  return r;
}

TEST(Schedule, ElementwiseExpressionIsOneFusedStep) {
  Function f = trace({f32({1024})}, [](Expr x) { return tanh(x * 2.0 + 1.0) * x - exp(-x); });
  std::vector<WorkUnit> steps = passes::schedule(f);
  expect_valid_schedule(f, steps);
  ASSERT_EQ(steps.size(), 1u) << f.str();
  const WorkUnit& step = steps[0];
  EXPECT_TRUE(step.fused);
  ASSERT_EQ(non_constant(step.inputs).size(), 1u) << "x, plus the constants 2 and 1";
  EXPECT_EQ(non_constant(step.inputs)[0]->op, Op::Parameter);
  ASSERT_EQ(step.outputs.size(), 1u);
  EXPECT_EQ(step.outputs[0], &out(f));
  EXPECT_EQ(step.nodes.size(), nodes_of(f).size() - 3) << "every node but x and the two constants";
}

TEST(Schedule, ReductionSplitsAChainIntoTwoRegions) {
  // softmax without the max: exp(x) / sum(exp(x))
  Function f = trace({f32({16})}, [](Expr x) {
    Expr e = exp(x);
    return e / sum(e);
  });
  std::vector<WorkUnit> steps = passes::schedule(f);
  expect_valid_schedule(f, steps);
  ASSERT_EQ(steps.size(), 3u) << f.str();
  EXPECT_TRUE(steps[0].fused);
  ASSERT_EQ(steps[0].nodes.size(), 1u);
  EXPECT_EQ(steps[0].nodes[0]->op, Op::Exp);
  EXPECT_FALSE(steps[1].fused);
  EXPECT_EQ(steps[1].nodes[0]->op, Op::Sum);
  EXPECT_TRUE(steps[2].fused);
  ASSERT_EQ(steps[2].nodes.size(), 2u) << "the broadcast of the sum is loaded inside the second region";
  EXPECT_EQ(steps[2].nodes[0]->op, Op::Broadcast);
  EXPECT_EQ(steps[2].nodes[1]->op, Op::Divide);
  EXPECT_EQ(steps[2].inputs, (std::vector<const Node*>{steps[1].nodes[0], steps[0].nodes[0]}))
      << "inputs in order of first use: the sum (by the broadcast), then exp(x)";
}

TEST(Schedule, ValueUsedByReductionAndChainIsARegionOutput) {
  Function f = trace({f32({16})}, [](Expr x) {
    Expr y = exp(x) * 3.0;
    return tuple(sum(y), tanh(y) + 1.0);
  });
  std::vector<WorkUnit> steps = passes::schedule(f);
  expect_valid_schedule(f, steps);
  ASSERT_EQ(steps.size(), 2u) << f.str();
  const WorkUnit& region = steps[0];
  EXPECT_TRUE(region.fused);
  const Node* y = out(f, 0).operands[0].get();
  EXPECT_EQ(region.outputs, (std::vector<const Node*>{y, &out(f, 1)}))
      << "y for the sum, then the function's second output, in topological order";
  EXPECT_EQ(steps[1].nodes[0], &out(f, 0));
  EXPECT_EQ(steps[1].inputs, std::vector<const Node*>{y});
}

TEST(Schedule, BroadcastOfAValueInsideARegionIsNotFusedWithIt) {
  // An identity broadcast (the builders never make one) of a region's value.
  Function f = trace({f32({4})}, [](Expr x) {
    Expr e = exp(x);
    Attrs axes;
    axes.axes = {0};
    Expr b(Node::make(Op::Broadcast, e.spec(), {e.node()}, axes));
    return b + e;
  });
  std::vector<WorkUnit> steps = passes::schedule(f);
  expect_valid_schedule(f, steps);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].nodes, std::vector<const Node*>{out(f).operands[1].get()}) << "exp(x) alone";
  EXPECT_EQ(steps[1].nodes.size(), 2u) << "broadcast and add";
}

TEST(Schedule, ParametersAndConstantsAreNotSteps) {
  Function f = trace({f32({4})}, [](Expr x) { return tuple(x, constant(1.0, DType::F32)); });
  EXPECT_TRUE(passes::schedule(f).empty());

  Function g = trace({f32({4, 4})}, [](Expr x) { return dot(x, x) + eye(f32({4, 4})); });
  std::vector<WorkUnit> steps = passes::schedule(g);
  expect_valid_schedule(g, steps);
  EXPECT_EQ(steps.size(), 3u) << "dot, eye, then the add as a region of one:\n" << g.str();
}

// Random graphs over four shapes that the builders broadcast between.
class RandomGraph {
 public:
  explicit RandomGraph(uint32_t seed) : rng_(seed) {}

  Function make(int size) {
    return trace({f32({4, 3}), f32({4, 3}), f32({3})}, [&](Expr a, Expr b, Expr c) {
      values_ = {a, b, c, constant(0.5, DType::F32)};
      for (int i = 0; i < size; ++i) values_.push_back(next());
      Tuple outs{values_.back()};
      for (uint32_t k = pick(3); k > 0; --k) outs.push_back(values_[pick(values_.size())]);
      return outs;
    });
  }

 private:
  uint32_t pick(size_t n) { return static_cast<uint32_t>(rng_() % n); }

  static bool broadcastable(const Shape& a, const Shape& b) {
    if (a.rank() == 0 || b.rank() == 0 || a == b) return true;
    return a.rank() + b.rank() == 3 && a.dims().back() == 3 && b.dims().back() == 3;  // [4,3] with [3]
  }

  // Operands lean towards recent values, so that chains grow long and
  // reductions feed back into the regions they read.
  Expr operand() {
    const size_t n = values_.size();
    return values_[pick(2) ? n - 1 - pick(std::min<size_t>(n, 4)) : pick(n)];
  }

  Expr next() {
    Expr x = operand();
    switch (pick(10)) {
      case 0: return exp(x);
      case 1: return tanh(x) * 2.0;
      case 2: return -x;
      case 3: return x.rank() == 0 ? exp(x) : sum(x, {.axes = {0}});
      case 4: return sum(x);
      case 5:
        if (x.rank() == 0) return broadcast(x, Shape{3});
        if (x.rank() == 2) return reshape(x, Shape{12});
        return x.shape() == Shape{3} ? broadcast(x, Shape{4, 3}) : reshape(x, Shape{4, 3});
      default: {
        Expr y = operand();
        if (!broadcastable(x.shape(), y.shape())) return x + 1.0;
        return pick(2) ? x + y : x * y;
      }
    }
  }

  std::mt19937 rng_;
  std::vector<Expr> values_;
};

TEST(Schedule, RandomGraphsRespectEveryDependency) {
  RandomGraph gen(20240611);
  for (int i = 0; i < 1000; ++i) {
    Function f = gen.make(10 + i % 100);
    SCOPED_TRACE("graph " + std::to_string(i) + ":\n" + f.str());
    std::vector<WorkUnit> steps = passes::schedule(f);
    expect_valid_schedule(f, steps);
    std::vector<WorkUnit> again = passes::schedule(f);
    ASSERT_EQ(again.size(), steps.size()) << "schedule is deterministic";
    for (size_t s = 0; s < steps.size(); ++s) {
      EXPECT_EQ(again[s].nodes, steps[s].nodes) << "step " << s;
      EXPECT_EQ(again[s].inputs, steps[s].inputs) << "step " << s;
      EXPECT_EQ(again[s].outputs, steps[s].outputs) << "step " << s;
    }
    Function g = passes::eliminate_common_subexpressions(f);
    expect_valid_schedule(g, passes::schedule(g));
  }
}

TEST(Schedule, LongChainsNeedNoDeepStack) {
  constexpr int kLength = 100000;
  NodePtr x = parameter(0, f32({8})).node();
  Expr e(x);
  for (int i = 0; i < kLength; ++i) e = i % 2 ? exp(e) : -e;
  Function f({f32({8})}, {e});
  e = Expr();

  auto start = std::chrono::steady_clock::now();
  std::vector<WorkUnit> steps = passes::schedule(f);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].nodes.size(), static_cast<size_t>(kLength));
  EXPECT_EQ(steps[0].inputs, std::vector<const Node*>{x.get()});
  EXPECT_LT(seconds, 10.0) << "schedule must be linear in the graph's size";

  Function g = passes::eliminate_common_subexpressions(f);
  EXPECT_EQ(g.outputs()[0].node(), f.outputs()[0].node()) << "a chain has nothing to merge";
}

TEST(Schedule, LongChainsThroughReductionsAndFolding) {
  constexpr int kLength = 100000;
  constexpr int kLinks = kLength / 4;
  Expr e = parameter(0, f32({4}));
  for (int i = 0; i < kLinks; ++i) e = exp(e) + sum(e);
  Function f({f32({4})}, {e});
  e = Expr();
  std::vector<WorkUnit> steps = passes::schedule(f);
  expect_valid_schedule(f, steps);
  // Per link, its sum and one region: the link's broadcast and add, fused
  // with the next link's exp (the next add reads a sum of this region).
  EXPECT_EQ(steps.size(), static_cast<size_t>(2 * kLinks));
  steps.clear();

  Expr c = constant(1.0, DType::F32);
  for (int i = 0; i < kLength; ++i) c = -c;
  Function constant_chain({}, {c});
  c = Expr();
  int calls = 0;
  Function folded = passes::fold_constants(constant_chain, FakeEvaluator{&calls});
  EXPECT_EQ(calls, kLength);
  ASSERT_EQ(out(folded).op, Op::Constant);
  EXPECT_EQ(read(*out(folded).attrs.literal, 0), 1.0) << "an even number of negations";
}

TEST(Graph, DeepChainsAreReleasedWithoutRecursion) {
  // Destroying a 500k-node chain must not recurse once per node (the stack
  // would overflow); Node's destructor frees operands from a worklist.
  Expr e = parameter(0, f32({2}));
  for (int i = 0; i < 500000; ++i) e = negate(e);
  Function f({f32({2})}, {e});
  e = Expr();
  f = Function();
  SUCCEED() << "released";
}

}  // namespace
}  // namespace sluice
