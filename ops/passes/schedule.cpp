// Scheduling with fusion of elementwise chains.
//
// Every computed node starts as a unit of its own (a future step); units are
// kept in a topological order of the graph of units, by a position each. Nodes
// are added in topological order, each at the end. An elementwise node then
// merges with the unit of each operand of its shape, one at a time, unless
// some path leads from one of the two units to the other through a third:
// a step runs whole, so the merged step would have to run both before and
// after that third one. A merge keeps the order valid by moving only the
// units between the two (Pearce and Kelly's dynamic topological order), so
// the check and the upkeep cost what lies between, usually nothing. A
// Broadcast is merged only from its consumers' side: it is a load of its
// operand, never fused with it.
#include <algorithm>
#include <span>
#include <unordered_map>
#include <utility>

#include <sluice/ops/passes/graph_walk.h>
#include <sluice/ops/passes/passes.h>

namespace sluice::passes {
namespace {

constexpr int32_t kNone = -1;

// Parameters and constants are values the planner already has, not steps.
bool is_input_leaf(const Node& n) { return n.op == Op::Parameter || n.op == Op::Constant; }
bool is_fusible(const Node& n) { return is_elementwise(n.op) || n.op == Op::Broadcast; }

// f's graph by index: node i is the i-th in topological order; operands and
// users as compressed lists (an operand used twice is listed twice).
struct Graph {
  std::vector<NodePtr> nodes;
  std::vector<uint32_t> operand_start, operands;
  std::vector<uint32_t> user_start, users;
  std::vector<bool> is_output;

  explicit Graph(const Function& f) : nodes(topological_order(f.outputs())) {
    const size_t n = nodes.size();
    std::unordered_map<const Node*, uint32_t> index;
    index.reserve(n);
    for (uint32_t i = 0; i < n; ++i) index.emplace(nodes[i].get(), i);
    operand_start.assign(n + 1, 0);
    std::vector<uint32_t> user_count(n + 1, 0);
    for (uint32_t i = 0; i < n; ++i) {
      operand_start[i + 1] = operand_start[i] + static_cast<uint32_t>(nodes[i]->operands.size());
      for (const NodePtr& o : nodes[i]->operands) {
        uint32_t j = index.at(o.get());
        operands.push_back(j);
        ++user_count[j + 1];
      }
    }
    user_start.assign(n + 1, 0);
    for (uint32_t i = 0; i < n; ++i) user_start[i + 1] = user_start[i] + user_count[i + 1];
    users.resize(operands.size());
    std::vector<uint32_t> fill(user_start.begin(), user_start.end() - 1);
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t j : operands_of(i)) users[fill[j]++] = i;
    }
    is_output.assign(n, false);
    for (const Expr& out : f.outputs()) is_output[index.at(out.node().get())] = true;
  }

  size_t size() const { return nodes.size(); }
  const Node& node(uint32_t i) const { return *nodes[i]; }
  std::span<const uint32_t> operands_of(uint32_t i) const {
    return {operands.data() + operand_start[i], operands.data() + operand_start[i + 1]};
  }
  std::span<const uint32_t> users_of(uint32_t i) const {
    return {users.data() + user_start[i], users.data() + user_start[i + 1]};
  }
};

class Fusion {
 public:
  explicit Fusion(const Graph& g)
      : g_(g),
        unit_(g.size(), kNone),
        mark_(g.size(), 0),
        budget_(kBudgetPerItem * static_cast<int64_t>(g.size() + g.operands.size()) + kBudgetBase) {
    for (uint32_t v = 0; v < g.size(); ++v) add(v);
  }

  // The unit of node v; kNone for parameters and constants.
  int32_t unit(uint32_t v) const { return unit_[v]; }

  // Hands over the units in an order that respects every dependency, each
  // with its nodes in topological order.
  std::vector<std::vector<uint32_t>> take_units_in_order() {
    std::vector<int32_t> live;
    for (int32_t u = 0; u < static_cast<int32_t>(members_.size()); ++u) {
      if (!members_[u].empty()) live.push_back(u);
    }
    std::sort(live.begin(), live.end(), [&](int32_t a, int32_t b) { return pos_[a] < pos_[b]; });
    std::vector<std::vector<uint32_t>> units;
    units.reserve(live.size());
    for (int32_t u : live) {
      std::sort(members_[u].begin(), members_[u].end());
      units.push_back(std::move(members_[u]));
    }
    return units;
  }

 private:
  // The searches that prove merges safe are bounded in total by a multiple of
  // the graph's size, so no graph makes schedule quadratic; past the bound
  // merges are refused, which only leaves more, smaller regions.
  static constexpr int64_t kBudgetPerItem = 64;
  static constexpr int64_t kBudgetBase = 1 << 16;

  enum class Direction { Forward, Backward };

  void add(uint32_t v) {
    const Node& node = g_.node(v);
    if (is_input_leaf(node)) return;
    unit_[v] = static_cast<int32_t>(members_.size());
    members_.push_back({v});
    pos_.push_back(next_pos_++);
    if (!is_elementwise(node.op)) return;
    for (uint32_t o : g_.operands_of(v)) {
      int32_t other = unit_[o];
      if (other == kNone || other == unit_[v] || !is_fusible(g_.node(o)) ||
          g_.node(o).spec.shape != node.spec.shape) {
        continue;
      }
      try_merge(unit_[v], other);
    }
  }

  // Merges units a and b if no path leads from one to the other through a
  // third unit. Only the units between them in the order are searched,
  // starting from the smaller of the two.
  void try_merge(int32_t a, int32_t b) {
    const int32_t p = pos_[a] < pos_[b] ? a : b;  // first in the order
    const int32_t q = p == a ? b : a;
    if (members_[q].size() <= members_[p].size()) {
      if (!between(q, p, Direction::Backward, before_)) return;
      if (before_.empty()) return join(p, q, pos_[p]);
      if (!between(p, q, Direction::Forward, after_)) return;
    } else {
      if (!between(p, q, Direction::Forward, after_)) return;
      if (after_.empty()) return join(p, q, pos_[q]);
      if (!between(q, p, Direction::Backward, before_)) return;
    }
    // Units q depends on go first, then the merged unit, then units that
    // depend on p; they take the positions all of them held.
    std::vector<uint64_t> slots{pos_[p], pos_[q]};
    for (int32_t u : before_) slots.push_back(pos_[u]);
    for (int32_t u : after_) slots.push_back(pos_[u]);
    std::sort(slots.begin(), slots.end());
    auto by_pos = [&](int32_t x, int32_t y) { return pos_[x] < pos_[y]; };
    std::sort(before_.begin(), before_.end(), by_pos);
    std::sort(after_.begin(), after_.end(), by_pos);
    size_t i = 0;
    for (int32_t u : before_) pos_[u] = slots[i++];
    const uint64_t merged = slots[i];
    i = slots.size() - after_.size();
    for (int32_t u : after_) pos_[u] = slots[i++];
    join(p, q, merged);
  }

  // Collects into `found` the units strictly between `from` and `to` in the
  // order that depend on `from` (Forward) or that `from` depends on
  // (Backward). False if one of them touches `to` (a path through a third
  // unit), if an edge between the two feeds a Broadcast, or when the budget
  // is spent: the merge must not happen.
  bool between(int32_t from, int32_t to, Direction dir, std::vector<int32_t>& found) {
    const bool forward = dir == Direction::Forward;
    const uint64_t bound = pos_[to];
    ++stamp_;
    found.clear();
    stack_.assign(1, from);
    while (!stack_.empty()) {
      const int32_t u = stack_.back();
      stack_.pop_back();
      for (uint32_t m : members_[u]) {
        std::span<const uint32_t> edges = forward ? g_.users_of(m) : g_.operands_of(m);
        if ((budget_ -= 1 + static_cast<int64_t>(edges.size())) < 0) return false;
        for (uint32_t v : edges) {
          const int32_t w = unit_[v];
          if (w == kNone || w == u) continue;
          if (w == to) {
            if (u != from || g_.node(forward ? v : m).op == Op::Broadcast) return false;
            continue;
          }
          if ((forward ? pos_[w] < bound : pos_[w] > bound) && mark_[w] != stamp_) {
            mark_[w] = stamp_;
            stack_.push_back(w);
            found.push_back(w);
          }
        }
      }
    }
    return true;
  }

  void join(int32_t a, int32_t b, uint64_t pos) {
    if (members_[a].size() < members_[b].size()) std::swap(a, b);
    for (uint32_t v : members_[b]) unit_[v] = a;
    members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
    members_[b] = {};
    pos_[a] = pos;
  }

  const Graph& g_;
  std::vector<int32_t> unit_;
  std::vector<std::vector<uint32_t>> members_;
  std::vector<uint64_t> pos_;  // per unit: distinct, increasing along every edge
  uint64_t next_pos_ = 0;
  std::vector<uint32_t> mark_;  // per unit
  uint32_t stamp_ = 0;
  std::vector<int32_t> stack_, before_, after_;
  int64_t budget_;
};

}  // namespace

std::vector<WorkUnit> schedule(const Function& f) {
  Graph g(f);
  Fusion fusion(g);
  std::vector<std::vector<uint32_t>> units = fusion.take_units_in_order();

  // Inputs in order of first use, outputs in topological order. A unit whose
  // nodes are all Broadcasts (one, as it never merged) is a plain step.
  std::vector<WorkUnit> steps(units.size());
  std::vector<int32_t> listed(g.size(), kNone);  // unit whose inputs list the node
  for (size_t s = 0; s < units.size(); ++s) {
    WorkUnit& step = steps[s];
    const int32_t u = fusion.unit(units[s].front());
    for (uint32_t v : units[s]) {
      step.nodes.push_back(&g.node(v));
      step.fused |= is_elementwise(g.node(v).op);
      for (uint32_t o : g.operands_of(v)) {
        if (fusion.unit(o) == u || listed[o] == u) continue;
        listed[o] = u;
        step.inputs.push_back(&g.node(o));
      }
      bool used_outside = g.is_output[v];
      for (uint32_t w : g.users_of(v)) used_outside |= fusion.unit(w) != u;
      if (used_outside) step.outputs.push_back(&g.node(v));
    }
  }
  return steps;
}

}  // namespace sluice::passes
