#include <sluice/devices/cpu/plan.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include <sluice/devices/cpu/host_memory.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/loop.h>
#include <sluice/ops/error.h>
#include <sluice/ops/passes/passes.h>
#include <sluice/ops/results.h>

namespace sluice::cpu {
namespace {

// Ops whose result is exactly the operand's bytes read as another spec: they
// need no instruction, their value is their operand's memory.
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

std::string describe(const passes::Step& step, bool region) {
  if (!region) return std::string(op_name(step.nodes.front()->op));
  std::vector<std::string_view> names;
  for (const Node* n : step.nodes)
    if (std::find(names.begin(), names.end(), op_name(n->op)) == names.end()) names.push_back(op_name(n->op));
  std::string s = "fused region (";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + std::string(names[i]);
  return s + ")";
}

// Intermediates of a run share one arena: each value holds its bytes from the
// step that writes it to the last step that reads it, first fit.
class ArenaLayout {
 public:
  // The offset of a value written by step `first` and last read by `last`.
  int64_t place(int64_t bytes, int64_t first, int64_t last) {
    bytes = host_aligned_size(bytes);
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
  std::vector<Block> live_;
  int64_t size_ = 0;
};

class Lowering {
 public:
  explicit Lowering(Plan& plan) : plan_(plan), params_(plan.function.inputs().size()) {}

  void lower(const std::vector<passes::Step>& steps) {
    find_aliases(steps);
    find_results(steps);
    for (const Expr& out : plan_.function.outputs()) {
      const Node* r = root(out.node().get());
      if (r->op == Op::Parameter) params_[static_cast<size_t>(r->attrs.index)].shown = true;
      shown_.insert(r);
    }
    find_last_uses(steps);
    for (size_t s = 0; s < steps.size(); ++s)
      if (computes(steps[s])) emit(steps[s], static_cast<int64_t>(s));
    for (const Expr& out : plan_.function.outputs()) plan_.outputs.push_back(locate(out.node().get()));
    for (size_t j = plan_.outputs.size(); j-- > 0;)
      if (plan_.outputs[j].kind == Location::Kind::Slot)
        plan_.slots[static_cast<size_t>(plan_.outputs[j].index)].output = j;
    plan_.arena_bytes = arena_.size();
  }

 private:
  struct Param {
    int64_t last_use = -1;  // the last step reading it
    bool shown = false;     // a function output shows it
  };

  static bool computes(const passes::Step& step) {
    if (step.nodes.size() != 1) return true;
    const Node& n = *step.nodes.front();
    // A result's memory is placed by its node's instruction, which writes it.
    return n.op != Op::Parameter && n.op != Op::Constant && n.op != Op::Result && !is_alias(n);
  }
  static bool is_region(const passes::Step& step) {
    return step.fused || (step.nodes.size() == 1 && is_elementwise(step.nodes.front()->op));
  }
  // What a step reads, in the order its instruction receives it.
  static const std::vector<const Node*>& reads(const passes::Step& step, std::vector<const Node*>& operands) {
    if (is_region(step)) return step.inputs;
    operands.clear();
    for (const NodePtr& o : step.nodes.front()->operands) operands.push_back(o.get());
    return operands;
  }
  static std::vector<const Node*> writes(const passes::Step& step) {
    return is_region(step) ? step.outputs : std::vector<const Node*>{step.nodes.front()};
  }

  const Node* root(const Node* n) const {
    auto it = alias_root_.find(n);
    return it == alias_root_.end() ? n : it->second;
  }

  void find_aliases(const std::vector<passes::Step>& steps) {
    for (const passes::Step& step : steps) {
      if (step.nodes.size() != 1 || !is_alias(*step.nodes.front())) continue;
      const Node* n = step.nodes.front();
      alias_root_[n] = root(n->operands[0].get());
    }
  }

  void find_results(const std::vector<passes::Step>& steps) {
    for (const passes::Step& step : steps) {
      const Node* n = step.nodes.front();
      if (n->op != Op::Result) continue;
      std::vector<const Node*>& results = results_[n->operands[0].get()];
      results.resize(std::max(results.size(), static_cast<size_t>(n->attrs.index) + 1));
      results[static_cast<size_t>(n->attrs.index)] = n;
    }
  }

  void find_last_uses(const std::vector<passes::Step>& steps) {
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

  Location locate(const Node* n) {
    const Node* r = root(n);
    if (r->op == Op::Parameter) return {Location::Kind::Argument, r->attrs.index};
    if (r->op == Op::Constant) return materialise(r);
    auto it = placed_.find(r);
    if (it == placed_.end())
      throw InternalError("host: lowering " + std::string(op_name(n->op)) +
                          ": its value is read before any step computes it");
    return it->second;
  }

  Location materialise(const Node* c) {
    auto [it, added] = placed_.try_emplace(c, Location{Location::Kind::Constant, 0});
    if (!added) return it->second;
    const Literal& lit = *c->attrs.literal;
    std::shared_ptr<void> memory = host_allocate(lit.bytes.size());
    if (!lit.bytes.empty()) std::memcpy(memory.get(), lit.bytes.data(), lit.bytes.size());
    it->second.index = static_cast<int64_t>(plan_.constants.size());
    plan_.constants.push_back(std::move(memory));
    return it->second;
  }

  void emit(const passes::Step& step, int64_t s) {
    if (has_several_results(step.nodes.front()->op)) return emit_several(*step.nodes.front(), step, s);
    Instruction ins;
    bool region = is_region(step);
    ins.what = describe(step, region);
    std::vector<const Node*> operands;
    for (const Node* in : reads(step, operands)) {
      ins.inputs.push_back(locate(in));
      plan_.work += in->spec.size();
    }
    std::vector<const Node*> outs = writes(step);
    for (const Node* out : outs) {
      ins.outputs.push_back(place(step, out, s));
      plan_.work += out->spec.size();
    }
    if (region)
      ins.region = std::make_unique<FusedRegion>(step.nodes, step.inputs, outs);
    else
      ins.node = step.nodes.front();
    plan_.instructions.push_back(std::move(ins));
  }

  // A node with several results writes each where its result node is
  // placed, or, for results nothing reads, into scratch of this step alone.
  // A loop's outputs end with a scratch block for its bodies.
  void emit_several(const Node& node, const passes::Step& step, int64_t s) {
    Instruction ins;
    ins.what = std::string(op_name(node.op));
    ins.node = &node;
    if (op_family(node.op) == OpFamily::Loop) ins.loop = std::make_shared<const CompiledLoop>(node);
    for (const NodePtr& o : node.operands) {
      ins.inputs.push_back(locate(o.get()));
      plan_.work += o->spec.size();
    }
    const std::vector<Spec> specs = result_specs(node);
    std::vector<const Node*>& results = results_[&node];
    results.resize(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      ins.outputs.push_back(results[i]
                                ? place(step, results[i], s)
                                : Location{Location::Kind::Arena, arena_.place(specs[i].bytes(), s, s)});
      plan_.work += specs[i].size();
    }
    if (ins.loop) {
      ins.outputs.push_back({Location::Kind::Arena, arena_.place(ins.loop->scratch_bytes(), s, s)});
      plan_.work += ins.loop->work();
    }
    plan_.instructions.push_back(std::move(ins));
  }

  Location place(const passes::Step& step, const Node* v, int64_t s) {
    Location loc;
    if (shown_.contains(v)) {
      loc = {Location::Kind::Slot, static_cast<int64_t>(plan_.slots.size())};
      plan_.slots.push_back({v->spec.bytes(), donors(step, v, s)});
    } else {
      auto it = last_use_.find(v);
      loc = {Location::Kind::Arena, arena_.place(v->spec.bytes(), s, it == last_use_.end() ? s : it->second)};
    }
    placed_[v] = loc;
    return loc;
  }

  std::vector<int64_t> donors(const passes::Step& step, const Node* v, int64_t s) const {
    std::vector<int64_t> out;
    const std::vector<Spec>& inputs = plan_.function.inputs();
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Param& p = params_[k];
      if (p.shown || inputs[k].bytes() != v->spec.bytes() || v->spec.bytes() == 0) continue;
      if (p.last_use < s || (p.last_use == s && reads_elementwise(step, static_cast<int64_t>(k))))
        out.push_back(static_cast<int64_t>(k));
    }
    return out;
  }

  // Whether every read of argument k in `step` is an elementwise node reading
  // the element at the index it writes, so the step may write over it.
  bool reads_elementwise(const passes::Step& step, int64_t k) const {
    if (!is_region(step)) return false;
    for (const Node* n : step.nodes)
      for (const NodePtr& o : n->operands) {
        const Node* r = root(o.get());
        if (r->op == Op::Parameter && r->attrs.index == k && !is_elementwise(n->op)) return false;
      }
    return true;
  }

  Plan& plan_;
  std::vector<Param> params_;
  std::unordered_map<const Node*, const Node*> alias_root_;
  std::unordered_set<const Node*> shown_;  // values function outputs show
  std::unordered_map<const Node*, int64_t> last_use_;
  std::unordered_map<const Node*, Location> placed_;
  // The result nodes of each node with several results, by index (null: a
  // result nothing reads).
  std::unordered_map<const Node*, std::vector<const Node*>> results_;
  ArenaLayout arena_;
};

Literal evaluate(const Node& node, const std::vector<const Literal*>& operands) {
  // Kernels may rely on kHostAlignment: literals' vectors do not have it.
  std::vector<std::shared_ptr<void>> copies;
  std::vector<const void*> in;
  for (const Literal* l : operands) {
    copies.push_back(host_allocate(l->bytes.size()));
    if (!l->bytes.empty()) std::memcpy(copies.back().get(), l->bytes.data(), l->bytes.size());
    in.push_back(copies.back().get());
  }
  auto bytes = static_cast<size_t>(node.spec.bytes());
  std::shared_ptr<void> out = host_allocate(bytes);
  run_node(node, in, out.get());
  Literal result{node.spec, std::vector<uint8_t>(bytes)};
  if (bytes) std::memcpy(result.bytes.data(), out.get(), bytes);
  return result;
}

void run_elementwise(const Node& node, std::span<const void* const> in, void* out) {
  // A region reads each distinct value once: multiply(x, x) has one input.
  std::vector<const Node*> inputs;
  std::vector<const void*> data;
  for (size_t i = 0; i < node.operands.size(); ++i) {
    const Node* o = node.operands[i].get();
    if (std::find(inputs.begin(), inputs.end(), o) != inputs.end()) continue;
    inputs.push_back(o);
    data.push_back(in[i]);
  }
  FusedRegion region({&node}, inputs, {&node});
  void* outs[] = {out};
  region.run(data, outs);
}

}  // namespace

void run_node(const Node& node, std::span<const void* const> in, void* out) {
  switch (op_family(node.op)) {
    case OpFamily::Leaf:
      if (node.op == Op::Parameter)
        throw InternalError("host: a parameter has no kernel: it is an argument of the run");
      return run_creation(node, out);
    case OpFamily::Unary:
    case OpFamily::Binary:
    case OpFamily::Ternary:
    case OpFamily::Convert: return run_elementwise(node, in, out);
    case OpFamily::Shape: return run_shape(node, in, out);
    case OpFamily::Reduce: return run_reduce(node, in[0], out);
    case OpFamily::Dot: return run_dot(node, in[0], in[1], out);
    case OpFamily::Window: return run_window(node, in, out);
    case OpFamily::Scan: return run_scan(node, in[0], out);
    case OpFamily::Fft: return run_fft(node, in[0], out);
    case OpFamily::Index: return run_index(node, in, out);
    case OpFamily::Sort: return run_sort(node, in[0], out);
    case OpFamily::Conv: return run_conv(node, in[0], in[1], out);
    case OpFamily::LinAlg: {
      if (has_several_results(node.op))
        throw InternalError("host: " + std::string(op_name(node.op)) +
                            " has several results: run_node_results runs it");
      void* const outs[] = {out};
      return run_linalg(node, in, outs);
    }
    case OpFamily::Loop:
      throw InternalError("host: " + std::string(op_name(node.op)) +
                          " runs as a step of a plan (loop.h), not as one node");
    case OpFamily::Result: throw InternalError("host: a result is written by the step of the node it reads");
  }
}

void run_node_results(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  if (op_family(node.op) != OpFamily::LinAlg)
    throw InternalError("host: " + std::string(op_name(node.op)) +
                        " runs as a step of a plan (loop.h), not as one node");
  run_linalg(node, in, out);
}

Plan make_plan(const Function& f) {
  Plan plan;
  plan.function = passes::fold_constants(passes::eliminate_common_subexpressions(f), evaluate);
  Lowering(plan).lower(passes::schedule(plan.function));
  return plan;
}

}  // namespace sluice::cpu
