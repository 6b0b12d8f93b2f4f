// Scheduling with fusion of elementwise chains.
//
// Nodes are grouped greedily in topological order: an elementwise node starts
// a group of its own, then merges with the group of each operand of its shape,
// one at a time, unless the merged group would have a path leaving it and
// coming back (its step could then neither run before nor after the step on
// that path). Each group is kept free of such paths, which is exactly what
// makes the steps orderable. A Broadcast starts a group and is merged only
// from its consumers' side: it is a load of its operand, never fused with it.
#include <algorithm>
#include <functional>
#include <queue>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

#include "ops/error.h"
#include "ops/passes/graph_walk.h"
#include "ops/passes/passes.h"

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
        group_(g.size(), kNone),
        mark_(g.size(), 0),
        budget_(kBudgetPerItem * static_cast<int64_t>(g.size() + g.operands.size()) + kBudgetBase) {
    for (uint32_t v = 0; v < g.size(); ++v) add(v);
  }

  // The group of node v, kNone for a node that is not fused.
  int32_t group(uint32_t v) const { return group_[v]; }

 private:
  // The searches that prove a merge safe are bounded in total, so schedule
  // stays linear on any graph; past the bound merges are refused, which only
  // leaves more, smaller regions.
  static constexpr int64_t kBudgetPerItem = 64;
  static constexpr int64_t kBudgetBase = 1 << 16;

  void add(uint32_t v) {
    const Node& node = g_.node(v);
    if (!is_fusible(node)) return;
    group_[v] = static_cast<int32_t>(members_.size());
    members_.push_back({v});
    first_.push_back(v);
    if (node.op == Op::Broadcast) return;
    for (uint32_t o : g_.operands_of(v)) {
      int32_t other = group_[o];
      if (other == kNone || other == group_[v] || g_.node(o).spec.shape != node.spec.shape) continue;
      if (!paths_between(group_[v], other, v)) merge(group_[v], other);
    }
  }

  void merge(int32_t a, int32_t b) {
    if (members_[a].size() < members_[b].size()) std::swap(a, b);
    for (uint32_t v : members_[b]) group_[v] = a;
    members_[a].insert(members_[a].end(), members_[b].begin(), members_[b].end());
    members_[b] = {};
    first_[a] = std::min(first_[a], first_[b]);
  }

  // Whether merging groups a and b would break a step's contract: a path from
  // one to the other through a node of neither, or a Broadcast of a value of
  // one group in the other. Only the smaller group is walked: its edges
  // forward and back; `current`, the node being added, bounds what exists.
  bool paths_between(int32_t a, int32_t b, uint32_t current) {
    int32_t x = members_[a].size() <= members_[b].size() ? a : b;
    int32_t y = x == a ? b : a;
    return reaches(x, y, current, Direction::Forward) || reaches(x, y, current, Direction::Backward);
  }

  enum class Direction { Forward, Backward };

  // Forward: a path x -> (non-members)+ -> y, following users; only nodes
  // before `current` can lead into y. Backward: a path y -> (non-members)+ ->
  // x, following operands from x; only nodes after y's first can come from y.
  bool reaches(int32_t x, int32_t y, uint32_t current, Direction dir) {
    const bool forward = dir == Direction::Forward;
    auto next = [&](uint32_t v) { return forward ? g_.users_of(v) : g_.operands_of(v); };
    auto may_lead_to_y = [&](uint32_t v) { return forward ? v < current : v > first_[y]; };
    ++stamp_;
    stack_.clear();
    for (uint32_t m : members_[x]) {
      std::span<const uint32_t> edges = next(m);
      if ((budget_ -= 1 + static_cast<int64_t>(edges.size())) < 0) return true;
      for (uint32_t v : edges) {
        if (group_[v] == x) continue;
        if (group_[v] == y) {
          const Node& consumer = g_.node(forward ? v : m);
          if (consumer.op == Op::Broadcast) return true;
          continue;
        }
        push(v, may_lead_to_y(v));
      }
    }
    while (!stack_.empty()) {
      uint32_t w = stack_.back();
      stack_.pop_back();
      std::span<const uint32_t> edges = next(w);
      if ((budget_ -= 1 + static_cast<int64_t>(edges.size())) < 0) return true;
      for (uint32_t v : edges) {
        if (group_[v] == y) return true;
        push(v, may_lead_to_y(v));
      }
    }
    return false;
  }

  void push(uint32_t v, bool relevant) {
    if (!relevant || mark_[v] == stamp_) return;
    mark_[v] = stamp_;
    stack_.push_back(v);
  }

  const Graph& g_;
  std::vector<int32_t> group_;
  std::vector<std::vector<uint32_t>> members_;
  std::vector<uint32_t> first_;  // smallest member index of each group
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> stack_;
  int64_t budget_;
};

}  // namespace

std::vector<Step> schedule(const Function& f) {
  Graph g(f);
  Fusion fusion(g);
  const size_t n = g.size();

  // Steps in order of first node; a group of a lone Broadcast is a plain step.
  std::vector<Step> steps;
  std::vector<int32_t> step_of(n, kNone);
  std::unordered_map<int32_t, int32_t> step_of_group;
  for (uint32_t v = 0; v < n; ++v) {
    const Node& node = g.node(v);
    if (is_input_leaf(node)) continue;
    int32_t group = fusion.group(v);
    int32_t fresh = static_cast<int32_t>(steps.size());
    step_of[v] = group == kNone ? fresh : step_of_group.try_emplace(group, fresh).first->second;
    if (step_of[v] == fresh) steps.emplace_back();
    Step& step = steps[static_cast<size_t>(step_of[v])];
    step.nodes.push_back(&node);
    step.fused |= is_elementwise(node.op);
  }

  // Inputs in order of first use, outputs in topological order; edges between
  // steps for the ordering below.
  std::vector<int32_t> listed(n, kNone);
  std::vector<std::vector<int32_t>> successors(steps.size());
  std::vector<int32_t> pending(steps.size(), 0);
  std::vector<uint32_t> last_node(steps.size(), 0);
  for (uint32_t v = 0; v < n; ++v) {
    int32_t s = step_of[v];
    if (s == kNone) continue;
    Step& step = steps[static_cast<size_t>(s)];
    last_node[static_cast<size_t>(s)] = v;
    for (uint32_t o : g.operands_of(v)) {
      if (step_of[o] == s || listed[o] == s) continue;
      listed[o] = s;
      step.inputs.push_back(&g.node(o));
      if (step_of[o] != kNone) {
        successors[static_cast<size_t>(step_of[o])].push_back(s);
        ++pending[static_cast<size_t>(s)];
      }
    }
    bool used_outside = g.is_output[v];
    for (uint32_t u : g.users_of(v)) used_outside |= step_of[u] != s;
    if (used_outside) step.outputs.push_back(&g.node(v));
  }

  // Kahn's order over steps; ties go to the step whose last node comes first
  // in topological order, so the order is deterministic and close to f's.
  using Entry = std::pair<uint32_t, int32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (size_t s = 0; s < steps.size(); ++s) {
    if (pending[s] == 0) ready.emplace(last_node[s], static_cast<int32_t>(s));
  }
  std::vector<Step> ordered;
  ordered.reserve(steps.size());
  while (!ready.empty()) {
    int32_t s = ready.top().second;
    ready.pop();
    ordered.push_back(std::move(steps[static_cast<size_t>(s)]));
    for (int32_t t : successors[static_cast<size_t>(s)]) {
      if (--pending[static_cast<size_t>(t)] == 0) ready.emplace(last_node[static_cast<size_t>(t)], t);
    }
  }
  if (ordered.size() != steps.size()) {
    throw Error("schedule: fused steps: expected an acyclic order of " + std::to_string(steps.size()) +
                " steps, found a cycle after " + std::to_string(ordered.size()));
  }
  return ordered;
}

}  // namespace sluice::passes
