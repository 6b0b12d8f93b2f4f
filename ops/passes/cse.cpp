// Common-subexpression elimination. Nodes are visited operands first, so by
// the time a node is seen its operands are already the one representative of
// their class: two nodes are then equal when op, spec and attrs are equal and
// their operands are the same nodes (in either order for a commutative op),
// a constant-time test instead of a structural walk.
#include <unordered_map>
#include <utility>

#include <sluice/ops/detail/hash.h>
#include <sluice/ops/passes/graph_walk.h>
#include <sluice/ops/passes/passes.h>

namespace sluice::passes {
namespace {

bool same_operands(const Node& a, const Node& b) {
  if (a.operands.size() != b.operands.size()) return false;
  bool in_order = true;
  for (size_t i = 0; i < a.operands.size(); ++i) in_order &= a.operands[i] == b.operands[i];
  if (in_order) return true;
  return is_commutative(a.op) && a.operands.size() == 2 && a.operands[0] == b.operands[1] &&
         a.operands[1] == b.operands[0];
}

bool equal(const Node& a, const Node& b) {
  return a.op == b.op && a.spec == b.spec && same_operands(a, b) && a.attrs == b.attrs;
}

// The structural hash depends on operand order; a commutative node is keyed
// by its operands' hashes in sorted order so that a+b and b+a meet.
uint64_t key(const Node& n) {
  if (!is_commutative(n.op) || n.operands.size() != 2) return n.hash;
  uint64_t lo = n.operands[0]->hash, hi = n.operands[1]->hash;
  if (lo > hi) std::swap(lo, hi);
  return detail::Hasher().add(static_cast<uint64_t>(n.op)).add(n.attrs.hash()).add(lo).add(hi).value();
}

}  // namespace

Function eliminate_common_subexpressions(const Function& f) {
  std::unordered_multimap<uint64_t, NodePtr> seen;
  return rebuild(f, [&](const NodePtr& node) -> NodePtr {
    // stop_gradient is an identity that only grad reads: a value and its
    // stop_gradient are one value to every later pass and backend.
    if (node->op == Op::StopGradient) return node->operands[0];
    uint64_t k = key(*node);
    auto [first, last] = seen.equal_range(k);
    for (auto it = first; it != last; ++it) {
      if (equal(*it->second, *node)) return it->second;
    }
    seen.emplace(k, node);
    return node;
  });
}

}  // namespace sluice::passes
