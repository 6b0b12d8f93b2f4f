#include <sluice/devices/detail/lowering.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <sluice/base/error.h>
#include <sluice/ops/passes/passes.h>
#include <sluice/ops/detail/results.h>

namespace sluice {

int64_t aligned_size(int64_t bytes, int64_t alignment) {
  return std::max<int64_t>(alignment, (bytes + alignment - 1) / alignment * alignment);
}

bool is_alias(const Node& n) {
  if (n.operands.size() != 1) return false;
  const Spec& in = n.operands[0]->spec;
  const std::vector<int64_t>& axes = n.attrs.axes;
  switch (n.op) {
    case Op::Reshape:
    case Op::Bitcast: return true;
    case Op::Broadcast:  // adding axes of size 1 only
      return n.spec.size() == in.size() &&
             std::adjacent_find(axes.begin(), axes.end(), std::greater_equal<>()) == axes.end();
    case Op::Transpose: {  // moving axes of size 1 only
      if (static_cast<int>(axes.size()) != in.shape.rank()) return false;
      int64_t last = -1;
      for (int64_t axis : axes) {
        if (in.shape.dim(static_cast<int>(axis)) == 1) continue;
        if (axis < last) return false;
        last = axis;
      }
      return true;
    }
    default: return false;
  }
}

namespace {

std::string describe(const passes::WorkUnit& step, bool region) {
  if (!region) return std::string(op_name(step.nodes.front()->op));
  std::vector<std::string_view> names;
  for (const Node* n : step.nodes)
    if (std::find(names.begin(), names.end(), op_name(n->op)) == names.end()) names.push_back(op_name(n->op));
  std::string s = "fused region (";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + std::string(names[i]);
  return s + ")";
}

// Intermediates of a run share one block: each value holds its bytes from the
// step that writes it to the last step that reads it, first fit.
class ScratchLayout {
 public:
  explicit ScratchLayout(int64_t alignment) : alignment_(alignment) {}

  // The offset of a value written by step `first` and last read by `last`.
  int64_t place(int64_t bytes, int64_t first, int64_t last) {
    bytes = aligned_size(bytes, alignment_);
    // Steps come in order: a block whose last reader ran before `first` is free for good.
    std::erase_if(live_, [&](const Block& b) { return b.last < first; });
    std::sort(live_.begin(), live_.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; });
    int64_t offset = 0;
    for (const Block& b : live_) {
      if (offset + bytes <= b.offset) break;
      offset = std::max(offset, b.offset + b.bytes);
    }
    live_.push_back({offset, bytes, last});
    size_ = std::max(size_, offset + bytes);
    return offset;
  }
  int64_t size() const { return size_; }

 private:
  struct Block {
    int64_t offset, bytes, last;
  };
  int64_t alignment_;
  std::vector<Block> live_;
  int64_t size_ = 0;
};

class Lowering {
 public:
  Lowering(LoweredFunction& out, const LoweringRules& rules)
      : out_(out), rules_(rules), params_(out.function.inputs().size()), scratch_(rules.alignment) {}

  void lower(const std::vector<passes::WorkUnit>& steps) {
    find_aliases(steps);
    find_results(steps);
    for (const Expr& o : out_.function.outputs()) {
      const Node* r = root(o.node().get());
      if (r->op == Op::Parameter) params_[static_cast<size_t>(r->attrs.index)].shown = true;
      shown_.insert(r);
    }
    find_last_uses(steps);
    for (size_t s = 0; s < steps.size(); ++s)
      if (computes(steps[s])) emit(steps[s], static_cast<int64_t>(s));
    for (const Expr& o : out_.function.outputs()) out_.outputs.push_back(locate(o.node().get()));
    for (size_t j = out_.outputs.size(); j-- > 0;)
      if (out_.outputs[j].kind == ValueLocation::Kind::Slot)
        out_.slots[static_cast<size_t>(out_.outputs[j].index)].output = j;
    out_.scratch_bytes = scratch_.size();
  }

 private:
  struct Param {
    int64_t last_use = -1;  // the last step reading it
    bool shown = false;     // a function output shows it
  };

  static bool computes(const passes::WorkUnit& step) {
    if (step.nodes.size() != 1) return true;
    const Node& n = *step.nodes.front();
    // A result's memory is placed by its node's step, which writes it.
    return n.op != Op::Parameter && n.op != Op::Constant && n.op != Op::Result && !is_alias(n);
  }
  static bool is_region(const passes::WorkUnit& step) {
    return step.fused || (step.nodes.size() == 1 && is_elementwise(step.nodes.front()->op));
  }
  // What a step reads, in the order its instruction receives it.
  static const std::vector<const Node*>& reads(const passes::WorkUnit& step, std::vector<const Node*>& operands) {
    if (is_region(step)) return step.inputs;
    operands.clear();
    for (const NodePtr& o : step.nodes.front()->operands) operands.push_back(o.get());
    return operands;
  }
  static std::vector<const Node*> writes(const passes::WorkUnit& step) {
    return is_region(step) ? step.outputs : std::vector<const Node*>{step.nodes.front()};
  }

  const Node* root(const Node* n) const {
    auto it = alias_root_.find(n);
    return it == alias_root_.end() ? n : it->second;
  }

  void find_aliases(const std::vector<passes::WorkUnit>& steps) {
    for (const passes::WorkUnit& step : steps) {
      if (step.nodes.size() != 1 || !is_alias(*step.nodes.front())) continue;
      const Node* n = step.nodes.front();
      alias_root_[n] = root(n->operands[0].get());
    }
  }

  void find_results(const std::vector<passes::WorkUnit>& steps) {
    for (const passes::WorkUnit& step : steps) {
      const Node* n = step.nodes.front();
      if (n->op != Op::Result) continue;
      std::vector<const Node*>& results = results_[n->operands[0].get()];
      results.resize(std::max(results.size(), static_cast<size_t>(n->attrs.index) + 1));
      results[static_cast<size_t>(n->attrs.index)] = n;
    }
  }

  void find_last_uses(const std::vector<passes::WorkUnit>& steps) {
    std::vector<const Node*> operands;
    for (size_t s = 0; s < steps.size(); ++s) {
      if (!computes(steps[s])) continue;
      for (const Node* in : reads(steps[s], operands)) {
        const Node* r = root(in);
        if (r->op == Op::Parameter)
          params_[static_cast<size_t>(r->attrs.index)].last_use = static_cast<int64_t>(s);
        last_use_[r] = static_cast<int64_t>(s);
      }
    }
  }

  ValueLocation locate(const Node* n) {
    const Node* r = root(n);
    if (r->op == Op::Parameter) return {ValueLocation::Kind::Argument, r->attrs.index};
    if (r->op == Op::Constant) {
      auto [it, added] = placed_.try_emplace(r, ValueLocation{ValueLocation::Kind::Constant, 0});
      if (added) {
        it->second.index = static_cast<int64_t>(out_.constants.size());
        out_.constants.push_back(r);
      }
      return it->second;
    }
    auto it = placed_.find(r);
    if (it == placed_.end())
      throw InternalError(error_message("lowering " + std::string(op_name(n->op)),
                                        "its value is read before any step computes it", "", ""));
    return it->second;
  }

  void emit(const passes::WorkUnit& step, int64_t s) {
    const Node& first = *step.nodes.front();
    LoweredUnit ls;
    ls.region = is_region(step);
    ls.what = describe(step, ls.region);
    ls.nodes = step.nodes;
    std::vector<const Node*> operands;
    for (const Node* in : reads(step, operands)) {
      ls.inputs.push_back(locate(in));
      out_.work += in->spec.size();
    }
    if (ls.region) {
      ls.reads = step.inputs;
      ls.writes = step.outputs;
    }
    if (has_several_results(first.op)) {
      place_results(first, step, s, ls);
    } else {
      for (const Node* w : writes(step)) {
        ls.outputs.push_back(place(step, w, s));
        out_.work += w->spec.size();
      }
    }
    out_.steps.push_back(std::move(ls));
  }

  // A node with several results writes each where its result node is
  // placed, or, for results nothing reads, into scratch of this step alone;
  // then, when the backend asks for it, a scratch block of its own.
  void place_results(const Node& node, const passes::WorkUnit& step, int64_t s, LoweredUnit& ls) {
    const std::vector<Spec> specs = result_specs(node);
    std::vector<const Node*>& results = results_[&node];
    results.resize(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      ls.outputs.push_back(results[i]
                               ? place(step, results[i], s)
                               : ValueLocation{ValueLocation::Kind::Scratch, scratch_.place(specs[i].bytes(), s, s)});
      out_.work += specs[i].size();
    }
    if (!rules_.several_results) return;
    const StepNeeds needs = rules_.several_results(node);
    out_.work += needs.work;
    if (needs.scratch_bytes > 0)
      ls.outputs.push_back({ValueLocation::Kind::Scratch, scratch_.place(needs.scratch_bytes, s, s)});
  }

  ValueLocation place(const passes::WorkUnit& step, const Node* v, int64_t s) {
    ValueLocation loc;
    if (shown_.contains(v)) {
      loc = {ValueLocation::Kind::Slot, static_cast<int64_t>(out_.slots.size())};
      out_.slots.push_back({v->spec.bytes(), donors(step, v, s)});
    } else {
      auto it = last_use_.find(v);
      loc = {ValueLocation::Kind::Scratch, scratch_.place(v->spec.bytes(), s, it == last_use_.end() ? s : it->second)};
    }
    placed_[v] = loc;
    return loc;
  }

  std::vector<int64_t> donors(const passes::WorkUnit& step, const Node* v, int64_t s) const {
    std::vector<int64_t> found;
    const std::vector<Spec>& inputs = out_.function.inputs();
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Param& p = params_[k];
      if (p.shown || inputs[k].bytes() != v->spec.bytes() || v->spec.bytes() == 0) continue;
      if (p.last_use < s || (p.last_use == s && reads_elementwise(step, static_cast<int64_t>(k))))
        found.push_back(static_cast<int64_t>(k));
    }
    return found;
  }

  // Whether every read of argument k in `step` is an elementwise node reading
  // the element at the index it writes, so the step may write over it.
  bool reads_elementwise(const passes::WorkUnit& step, int64_t k) const {
    if (!is_region(step)) return false;
    for (const Node* n : step.nodes)
      for (const NodePtr& o : n->operands) {
        const Node* r = root(o.get());
        if (r->op == Op::Parameter && r->attrs.index == k && !is_elementwise(n->op)) return false;
      }
    return true;
  }

  LoweredFunction& out_;
  const LoweringRules& rules_;
  std::vector<Param> params_;
  std::unordered_map<const Node*, const Node*> alias_root_;
  std::unordered_set<const Node*> shown_;  // values function outputs show
  std::unordered_map<const Node*, int64_t> last_use_;
  std::unordered_map<const Node*, ValueLocation> placed_;
  // The result nodes of each node with several results, by index (null: a
  // result nothing reads).
  std::unordered_map<const Node*, std::vector<const Node*>> results_;
  ScratchLayout scratch_;
};

}  // namespace

LoweredFunction lower(Function f, const LoweringRules& rules) {
  LoweredFunction out;
  out.function = std::move(f);
  Lowering(out, rules).lower(passes::schedule(out.function));
  return out;
}

}  // namespace sluice
