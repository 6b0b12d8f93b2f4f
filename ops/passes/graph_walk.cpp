#include <sluice/ops/passes/graph_walk.h>

#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace sluice::passes {

std::vector<NodePtr> topological_order(const std::vector<Expr>& roots) {
  std::vector<NodePtr> order;
  std::unordered_set<const Node*> seen;
  // (node, index of the next operand to visit)
  std::vector<std::pair<const NodePtr*, size_t>> stack;
  for (const Expr& root : roots) {
    if (!seen.insert(root.node().get()).second) continue;
    stack.emplace_back(&root.node(), 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const std::vector<NodePtr>& operands = (*node)->operands;
      if (next < operands.size()) {
        const NodePtr& operand = operands[next++];
        if (seen.insert(operand.get()).second) stack.emplace_back(&operand, 0);
        continue;
      }
      order.push_back(*node);
      stack.pop_back();
    }
  }
  return order;
}

Function rebuild(const Function& f, const Rewrite& rewrite) {
  std::unordered_map<const Node*, NodePtr> replaced;
  for (const NodePtr& node : topological_order(f.outputs())) {
    std::vector<NodePtr> operands;
    bool changed = false;
    operands.reserve(node->operands.size());
    for (const NodePtr& operand : node->operands) {
      const NodePtr& now = replaced.at(operand.get());
      changed |= now != operand;
      operands.push_back(now);
    }
    NodePtr remade = changed ? Node::make(node->op, node->spec, std::move(operands), node->attrs) : node;
    replaced.emplace(node.get(), rewrite(remade));
  }
  std::vector<Expr> outputs;
  bool changed = false;
  for (const Expr& out : f.outputs()) {
    const NodePtr& now = replaced.at(out.node().get());
    changed |= now != out.node();
    outputs.emplace_back(now);
  }
  return changed ? Function(f.inputs(), std::move(outputs)) : f;
}

}  // namespace sluice::passes
