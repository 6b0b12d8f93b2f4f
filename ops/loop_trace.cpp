#include <sluice/ops/detail/loop_trace.h>

#include <unordered_set>

#include <sluice/ops/passes/graph_walk.h>

namespace sluice::detail {

LoopTrace::LoopTrace(std::vector<Spec> specs) : specs_(std::move(specs)) {
  for (size_t i = 0; i < specs_.size(); ++i) params_.push_back(parameter(static_cast<int64_t>(i), specs_[i]));
}

NodePtr LoopTrace::lift(const NodePtr& outer) {
  auto [it, added] = lifted_.try_emplace(outer.get());
  if (added) {
    const auto index = static_cast<int64_t>(specs_.size() + captured_.size());
    it->second = parameter(index, outer->spec).node();
    captured_.emplace_back(outer);
  }
  return it->second;
}

std::vector<Function> LoopTrace::close(const std::vector<Tuple>& bodies) {
  Tuple roots;
  for (const Tuple& outputs : bodies) roots.insert(roots.end(), outputs.begin(), outputs.end());

  // A node is inner when it depends on a parameter of this trace: only inner
  // nodes are rebuilt. An outer node is lifted where an inner node or an
  // output reads it, if it depends on some parameter (of an enclosing trace).
  std::unordered_set<const Node*> inner, parametric;
  for (const Expr& p : params_) inner.insert(p.node().get());
  std::unordered_map<const Node*, NodePtr> remade;
  auto replacement = [&](const NodePtr& n) -> NodePtr {
    if (inner.contains(n.get())) return remade.at(n.get());
    return parametric.contains(n.get()) ? lift(n) : n;
  };
  for (const NodePtr& n : passes::topological_order(roots)) {
    bool in = inner.contains(n.get()), has_parameter = n->op == Op::Parameter;
    for (const NodePtr& o : n->operands) {
      in = in || inner.contains(o.get());
      has_parameter = has_parameter || parametric.contains(o.get());
    }
    if (has_parameter) parametric.insert(n.get());
    if (!in) continue;
    inner.insert(n.get());
    std::vector<NodePtr> operands;
    bool changed = false;
    for (const NodePtr& o : n->operands) {
      operands.push_back(replacement(o));
      changed = changed || operands.back() != o;
    }
    remade.emplace(n.get(), changed ? Node::make(n->op, n->spec, std::move(operands), n->attrs) : n);
  }

  std::vector<std::vector<Expr>> outputs;
  for (const Tuple& body : bodies) {
    outputs.emplace_back();
    for (const Expr& e : body) outputs.back().emplace_back(replacement(e.node()));
  }
  std::vector<Spec> specs = specs_;
  for (const Expr& c : captured_) specs.push_back(c.spec());
  std::vector<Function> functions;
  for (std::vector<Expr>& out : outputs) functions.emplace_back(specs, std::move(out));
  return functions;
}

}  // namespace sluice::detail
