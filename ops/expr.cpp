#include <sluice/ops/expr.h>

#include <string>
#include <unordered_set>
#include <utility>

#include <sluice/base/error.h>
#include <sluice/ops/detail/block_attrs.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/ops/detail/hash.h>
#include <sluice/ops/detail/loop_attrs.h>

namespace sluice {
namespace {

void add_list(detail::Hasher& h, const std::vector<int64_t>& v) {
  h.add(v.size());
  for (int64_t x : v) h.add(static_cast<uint64_t>(x));
}

struct PairHash {
  size_t operator()(const std::pair<const Node*, const Node*>& p) const {
    return std::hash<const Node*>()(p.first) * 31 + std::hash<const Node*>()(p.second);
  }
};

// Attrs held by pointer (a literal, a loop's, a block's): equal when both are absent or equal.
template <typename T>
bool same_held(const std::shared_ptr<const T>& a, const std::shared_ptr<const T>& b) {
  if (a == b) return true;
  return a && b && *a == *b;
}

}  // namespace

bool Attrs::operator==(const Attrs& o) const {
  return axes == o.axes && dims == o.dims && starts == o.starts && lengths == o.lengths &&
         strides == o.strides && padding == o.padding && contract_a == o.contract_a && batch_a == o.batch_a &&
         contract_b == o.contract_b && batch_b == o.batch_b && axis == o.axis && index == o.index &&
         dtype == o.dtype && keep_axes == o.keep_axes && reverse == o.reverse && weak == o.weak &&
         tie_break == o.tie_break && same_held(literal, o.literal) && same_held(loop, o.loop) &&
         same_held(block, o.block) && dilations == o.dilations && feature_groups == o.feature_groups &&
         batch_groups == o.batch_groups && linalg == o.linalg;
}

uint64_t Attrs::hash() const {
  detail::Hasher h;
  for (const auto* v :
       {&axes, &dims, &starts, &lengths, &strides, &contract_a, &batch_a, &contract_b, &batch_b}) {
    add_list(h, *v);
  }
  h.add(padding.size());
  for (const PadDim& p : padding) {
    h.add(static_cast<uint64_t>(p.low))
        .add(static_cast<uint64_t>(p.high))
        .add(static_cast<uint64_t>(p.interior));
  }
  h.add(static_cast<uint64_t>(axis)).add(static_cast<uint64_t>(index)).add(static_cast<uint64_t>(dtype));
  h.add(keep_axes).add(reverse).add(weak).add(static_cast<uint64_t>(tie_break));
  if (literal) {
    h.add(static_cast<uint64_t>(literal->spec.dtype));
    add_list(h, literal->spec.shape.dims());
    h.add_bytes(literal->bytes.data(), literal->bytes.size());
  } else {
    h.add(0);
  }
  h.add(loop ? loop->hash() : 0);
  h.add(block ? block->hash() : 0);
  add_list(h, dilations);
  h.add(static_cast<uint64_t>(feature_groups)).add(static_cast<uint64_t>(batch_groups));
  h.add(linalg.left_side).add(linalg.lower).add(static_cast<uint64_t>(linalg.transform));
  h.add(static_cast<uint64_t>(linalg.mode));
  return h.value();
}

Node::~Node() {
  std::vector<NodePtr> pending;
  auto take = [&pending](std::vector<NodePtr>& from) {
    for (NodePtr& o : from)
      if (o.use_count() == 1) pending.push_back(std::move(o));
    from.clear();
  };
  take(operands);
  while (!pending.empty()) {
    NodePtr last = std::move(pending.back());
    pending.pop_back();
    // The only owner: emptying its operands here leaves nothing to recurse into.
    take(const_cast<Node&>(*last).operands);
  }
}

NodePtr Node::make(Op op, Spec spec, std::vector<NodePtr> operands, Attrs attrs) {
  const int arity = op_arity(op);
  if (arity >= 0 && operands.size() != static_cast<size_t>(arity)) {
    throw ValueError(error_message(op_name(op), "", fmt::format("{} operands", arity), operands.size()));
  }
  detail::Hasher h;
  h.add(static_cast<uint64_t>(op)).add(static_cast<uint64_t>(spec.dtype));
  add_list(h, spec.shape.dims());
  h.add(attrs.hash()).add(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]) {
      throw ValueError(error_message(op_name(op), fmt::format("operand {}", i), "a node", "null"));
    }
    h.add(operands[i]->hash);
  }
  auto node = std::make_shared<Node>(Node{op, std::move(spec), std::move(operands), std::move(attrs), 0});
  node->hash = h.value();
  return node;
}

namespace {

using NodePair = std::pair<const Node*, const Node*>;

bool all_pairs_equal(std::vector<NodePair> work) {
  // Pairs already taken as equal: a DAG has no cycles, so assuming a pair
  // equal while its operands are checked is sound, and each pair is visited
  // once however much of the graph is shared.
  std::unordered_set<NodePair, PairHash> seen;
  while (!work.empty()) {
    auto [x, y] = work.back();
    work.pop_back();
    if (x == y) continue;
    if (!x || !y) return false;
    if (!seen.insert({x, y}).second) continue;
    if (x->hash != y->hash || x->op != y->op || x->spec != y->spec ||
        x->operands.size() != y->operands.size() || !(x->attrs == y->attrs)) {
      return false;
    }
    for (size_t i = 0; i < x->operands.size(); ++i)
      work.emplace_back(x->operands[i].get(), y->operands[i].get());
  }
  return true;
}

}  // namespace

bool structurally_equal(const Node& a, const Node& b) { return all_pairs_equal({{&a, &b}}); }

bool structurally_equal(const std::vector<NodePtr>& a, const std::vector<NodePtr>& b) {
  if (a.size() != b.size()) return false;
  std::vector<NodePair> work;
  for (size_t i = 0; i < a.size(); ++i) work.emplace_back(a[i].get(), b[i].get());
  return all_pairs_equal(std::move(work));
}

}  // namespace sluice
