#pragma once
// Walks shared by the passes. Graphs may be 100k nodes deep, so every walk is
// iterative (an explicit stack, never recursion) and visits each node once.

#include <functional>
#include <vector>

#include <sluice/ops/function.h>

namespace sluice::passes {

// Every node reachable from `roots`, operands before their users, each once.
// Deterministic: a depth-first post-order taking operands in order.
std::vector<NodePtr> topological_order(const std::vector<Expr>& roots);

// Rebuilds f bottom-up. `rewrite` sees each node once, after its operands,
// already remade over their replacements (Node::make only where an operand
// changed), and returns what replaces it. Returns f itself when nothing changed.
using Rewrite = std::function<NodePtr(const NodePtr& node)>;
Function rebuild(const Function& f, const Rewrite& rewrite);

}  // namespace sluice::passes
