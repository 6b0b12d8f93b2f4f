// Reverse-mode differentiation: cotangents flow from the first output back
// to the parameters, through each node's rule (grad_rules.h), in reverse
// topological order, so each node's cotangent is complete (summed over its
// users) before its own rule reads it. Only nodes that depend on a wrt
// parameter, and of floating or complex dtype, take part: the rest add
// nothing, and no graph is built for them.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <sluice/ops/autodiff.h>
#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/passes/graph_walk.h>
#include <sluice/ops/detail/results.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {
namespace {

using infer::cat;

void check_output(const Function& f, std::string_view op) {
  if (f.outputs().empty()) infer::type_error(op, "f", "a function with an output", "none");
  const Spec& out = f.outputs()[0].spec();
  if (!is_float(out.dtype))
    infer::type_error(op, "f's output 0", "a real floating scalar (f16, bf16, f32 or f64)", out.str());
  if (out.shape.rank() != 0) infer::shape_error(op, "f's output 0", "a scalar", out.str());
}

void check_wrt(const Function& f, const std::vector<int>& wrt, std::string_view op) {
  for (size_t i = 0; i < wrt.size(); ++i) {
    const int p = wrt[i];
    if (p < 0 || static_cast<size_t>(p) >= f.inputs().size()) {
      throw ValueError(error_message(op, cat("argument wrt[", i, "]"),
                                     cat("a parameter index in [0, ", f.inputs().size(), ")"), cat(p)));
    }
    const Spec& spec = f.inputs()[static_cast<size_t>(p)];
    if (!is_inexact(spec.dtype)) {
      infer::type_error(op, cat("wrt[", i, "] (parameter ", p, ")"),
                        "a floating or complex parameter (integers and pred have no gradient)", spec.str());
    }
  }
}

// The gradients of f's output 0 with respect to the wrt parameters.
std::vector<Expr> gradients(const Function& f, const std::vector<int>& wrt) {
  const std::unordered_set<int64_t> wanted(wrt.begin(), wrt.end());
  const std::vector<NodePtr> order = passes::topological_order({f.outputs()[0]});
  // Nodes on a path from a wanted parameter, through differentiable ops.
  // A node with several results holds no value of its own (its results do)
  // and passes gradients through its results rule; a result passes its
  // node's.
  std::unordered_set<const Node*> active;
  for (const NodePtr& n : order) {
    const bool several = has_several_results(n->op);
    if (!is_inexact(n->spec.dtype) && !several) continue;
    bool on_path = n->op == Op::Parameter && wanted.contains(n->attrs.index);
    if (is_differentiable(n->op) || n->op == Op::Result) {
      for (const NodePtr& o : n->operands) on_path = on_path || active.contains(o.get());
    }
    if (on_path) active.insert(n.get());
  }
  std::unordered_map<const Node*, Expr> cotangent;
  auto accumulate = [&](const Node* n, const Expr& ct) {
    auto [it, fresh] = cotangent.try_emplace(n, ct);
    if (!fresh) it->second = it->second + ct;
  };
  const Expr& out = f.outputs()[0];
  if (active.contains(out.node().get())) accumulate(out.node().get(), constant(1.0, out.dtype()));
  // The cotangents of a node's results, gathered before the node's turn comes.
  std::unordered_map<const Node*, std::vector<Expr>> result_cotangents;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodePtr& n = *it;
    std::vector<Expr> cts;
    if (has_several_results(n->op)) {
      auto gathered = result_cotangents.find(n.get());
      if (gathered == result_cotangents.end()) continue;
      cts = grad_rules::results_rule_of(n->op)(n, gathered->second);
    } else {
      auto ct = cotangent.find(n.get());
      if (ct == cotangent.end() || n->op == Op::Parameter) continue;
      if (n->op == Op::Result) {
        const Node* node = n->operands[0].get();
        if (!active.contains(node)) continue;
        std::vector<Expr>& results = result_cotangents[node];
        results.resize(result_specs(*node).size());
        Expr& slot = results[static_cast<size_t>(n->attrs.index)];
        slot = slot ? slot + ct->second : ct->second;
        continue;
      }
      cts = grad_rules::rule_of(n->op)(n, ct->second);
    }
    for (size_t i = 0; i < cts.size() && i < n->operands.size(); ++i) {
      const Node* o = n->operands[i].get();
      if (!cts[i] || !active.contains(o)) continue;
      if (cts[i].spec() != o->spec) {
        throw InternalError(error_message(cat("grad: the rule of ", op_name(n->op)),
                                          cat("operand ", i, "'s cotangent"), cat("its spec ", o->spec),
                                          cts[i].spec().str()));
      }
      accumulate(o, cts[i]);
    }
  }
  // Several parameter nodes may stand for one input (parameter() called
  // twice): their cotangents add up.
  std::unordered_map<int64_t, Expr> by_index;
  for (const NodePtr& n : order) {
    if (n->op != Op::Parameter) continue;
    auto ct = cotangent.find(n.get());
    if (ct == cotangent.end()) continue;
    auto [at, fresh] = by_index.try_emplace(n->attrs.index, ct->second);
    if (!fresh) at->second = at->second + ct->second;
  }
  std::vector<Expr> grads;
  for (int p : wrt) {
    const Spec& spec = f.inputs()[static_cast<size_t>(p)];
    auto at = by_index.find(p);
    grads.push_back(at != by_index.end() ? at->second : broadcast(constant(0.0, spec.dtype), spec.shape));
  }
  return grads;
}

}  // namespace

Function grad(const Function& f, std::vector<int> wrt) {
  check_output(f, "grad");
  check_wrt(f, wrt, "grad");
  return Function(f.inputs(), gradients(f, wrt));
}

Function value_and_grad(const Function& f, std::vector<int> wrt) {
  check_output(f, "value_and_grad");
  check_wrt(f, wrt, "value_and_grad");
  std::vector<Expr> outputs = f.outputs();
  for (Expr& g : gradients(f, wrt)) outputs.push_back(std::move(g));
  return Function(f.inputs(), std::move(outputs));
}

}  // namespace sluice
