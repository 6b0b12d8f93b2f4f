// Compiling a fused region: its nodes become values and steps (build_graph,
// which also folds x * a + b into unary math ops), then slots and kernel
// calls (make_plan).

#include <algorithm>
#include <string>
#include <unordered_map>

#include <sluice/devices/cpu/kernels/elementwise_program.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cpu {
namespace {

int64_t align_up(int64_t bytes) { return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign; }

bool is_narrow(DType t) { return t == DType::F16 || t == DType::BF16; }

// A value of the region before slots are assigned.
struct Value {
  enum class Kind : uint8_t { Input, Pattern, Gather, Computed, Constant } kind;
  int index = 0;  // Input: input position; Pattern/Gather: load index; Constant: constant_data's index
  DType dtype = DType::F32;
};

struct Load {
  int input;
  BroadcastMap map;
  DType dtype;
  bool pattern;
};

struct Instruction {
  std::vector<Kernel> kernels;  // the op, then its rounding (in place) if any
  int result;
  std::vector<int> operands;
  bool affine = false;  // operands 1 and 2 are read as scalars
};

struct Graph {
  std::vector<Value> values;
  std::vector<Load> loads;
  std::vector<Instruction> steps;
  std::vector<int> outputs;  // value of each output
};

std::string node_name(const Node& node) { return std::string(op_name(node.op)) + " " + node.spec.str(); }

Kernel op_kernel(const KernelTable& table, const Node& node) {
  const Node& key_operand = *node.operands[node.op == Op::Select ? 1 : 0];
  DType in = key_operand.spec.dtype;
  DType out = node.spec.dtype;
  Kernel k = nullptr;
  if (node.op == Op::AsType) {
    k = table.as_type[static_cast<int>(in)][static_cast<int>(out)];
  } else if (node.op == Op::Bitcast) {
    k = table.bitcast[static_cast<int>(in)][static_cast<int>(out)];
  } else {
    if (compute_dtype(op_result_dtype(node.op, in)) != compute_dtype(out)) {
      throw TypeError(error_message("fused region", node_name(node),
                                    "result dtype " + std::string(dtype_name(op_result_dtype(node.op, in))) +
                                        " for operands of " + std::string(dtype_name(in)),
                                    dtype_name(out)));
    }
    k = table.op[static_cast<int>(node.op)][static_cast<int>(compute_dtype(in))];
  }
  if (k == nullptr) {
    throw TypeError(error_message(
        "fused region",
        std::string(op_name(node.op)) + " is not implemented for " + std::string(dtype_name(in)) +
            (node.op == Op::AsType || node.op == Op::Bitcast ? " to " + std::string(dtype_name(out))
                                                             : std::string()) +
            " on the cpu backend",
        "", ""));
  }
  return k;
}

// ---- folding x * a + b into a unary math op

// A unary float op that reads (x * scale) + shift, scale and shift scalars
// of the region, computed in its kernel's registers (isa.h's affine
// table): the multiply and the add no longer cost a pass over the tile
// each. Absent parts are the identities 1 and -0 (x + -0 is x, also for
// x = -0), supplied as constants.
struct Affine {
  const Node* x = nullptr;
  const Node* scale = nullptr;  // null: 1, or -1 when `negate`
  const Node* shift = nullptr;  // null: -0
  bool negate = false;
};

bool is_scalar_load(const Node* n, const std::unordered_map<const Node*, int>& input_index) {
  return n->op == Op::Broadcast && input_index.contains(n->operands[0].get()) &&
         n->operands[0]->spec.size() == 1;
}

// Which unary ops read an affine function of a value computed only for
// them; the nodes that computed it are absorbed (not run).
std::unordered_map<const Node*, Affine> find_affine(const KernelTable& table,
                                                    const std::vector<const Node*>& nodes,
                                                    const std::vector<const Node*>& outputs,
                                                    const std::unordered_map<const Node*, int>& input_index,
                                                    std::unordered_map<const Node*, bool>& absorbed) {
  std::unordered_map<const Node*, int> uses;
  std::unordered_map<const Node*, bool> in_region;
  for (const Node* n : nodes) {
    in_region[n] = true;
    for (const NodePtr& o : n->operands) ++uses[o.get()];
  }
  for (const Node* n : outputs) ++uses[n];
  // n, computed in the region for one reader only, in dtype t.
  auto foldable = [&](const Node* n, DType t) {
    return in_region.contains(n) && uses[n] == 1 && n->spec.dtype == t && !absorbed.contains(n);
  };
  // The operand of a binary n that is not the scalar load, or null.
  auto other_than_scalar = [&](const Node* n) -> const Node* {
    if (is_scalar_load(n->operands[1].get(), input_index)) return n->operands[0].get();
    if (is_scalar_load(n->operands[0].get(), input_index)) return n->operands[1].get();
    return nullptr;
  };
  std::unordered_map<const Node*, Affine> found;
  for (const Node* n : nodes) {
    DType t = n->spec.dtype;
    if (op_arity(n->op) != 1 || op_family(n->op) != OpFamily::Unary || (t != DType::F32 && t != DType::F64))
      continue;
    if (table.affine[static_cast<int>(n->op)][static_cast<int>(t)] == nullptr) continue;
    if (n->operands[0]->spec.dtype != t) continue;
    Affine a;
    const Node* x = n->operands[0].get();
    std::vector<const Node*> taken;
    if (foldable(x, t) && x->op == Op::Add && other_than_scalar(x)) {
      const Node* rest = other_than_scalar(x);
      a.shift = rest == x->operands[0].get() ? x->operands[1].get() : x->operands[0].get();
      taken.push_back(x);
      x = rest;
    } else if (foldable(x, t) && x->op == Op::Subtract && is_scalar_load(x->operands[0].get(), input_index)) {
      a.shift = x->operands[0].get();  // s - y is s + (-y), exactly
      a.negate = true;
      taken.push_back(x);
      x = x->operands[1].get();
    }
    if (!a.negate && foldable(x, t) && x->op == Op::Multiply && other_than_scalar(x)) {
      const Node* rest = other_than_scalar(x);
      a.scale = rest == x->operands[0].get() ? x->operands[1].get() : x->operands[0].get();
      taken.push_back(x);
      x = rest;
    } else if (!a.negate && foldable(x, t) && x->op == Op::Negate) {
      a.negate = true;
      taken.push_back(x);
      x = x->operands[0].get();
    }
    if (taken.empty()) continue;
    a.x = x;
    for (const Node* m : taken) absorbed[m] = true;
    found[n] = a;
  }
  return found;
}

Graph build_graph(const KernelTable& table, const std::vector<const Node*>& nodes,
                  const std::vector<const Node*>& inputs, const std::vector<const Node*>& outputs,
                  const Shape& shape) {
  Graph g;
  std::unordered_map<const Node*, int> value_of;
  std::vector<int> raw_input(inputs.size(), -1);  // Input value of each input, once made
  std::vector<int> widened(inputs.size(), -1);    // its compute representation, for f16/bf16
  auto add_value = [&](Value v) {
    g.values.push_back(v);
    return static_cast<int>(g.values.size()) - 1;
  };
  // An input read element for element: in place, or widened once into scratch.
  auto direct_input = [&](int i) {
    DType t = inputs[static_cast<size_t>(i)]->spec.dtype;
    if (raw_input[static_cast<size_t>(i)] < 0)
      raw_input[static_cast<size_t>(i)] = add_value({Value::Kind::Input, i, t});
    if (!is_narrow(t)) return raw_input[static_cast<size_t>(i)];
    if (widened[static_cast<size_t>(i)] < 0) {
      widened[static_cast<size_t>(i)] = add_value({Value::Kind::Computed, 0, t});
      g.steps.push_back({{table.widen[static_cast<int>(t)]},
                         widened[static_cast<size_t>(i)],
                         {raw_input[static_cast<size_t>(i)]}});
    }
    return widened[static_cast<size_t>(i)];
  };
  std::unordered_map<const Node*, int> input_index;
  for (size_t i = 0; i < inputs.size(); ++i) input_index.emplace(inputs[i], static_cast<int>(i));
  // The value of `operand`, the k-th operand of `node`.
  auto operand_value = [&](const Node& node, const Node* operand, size_t k) {
    if (auto it = value_of.find(operand); it != value_of.end()) return it->second;
    auto it = input_index.find(operand);
    if (it == input_index.end()) {
      throw DeviceError(error_message("fused region", fmt::format("operand {} of {}", k, node_name(node)),
                                      "a region input or an earlier node of the region",
                                      node_name(*operand)));
    }
    if (operand->spec.shape.size() != shape.size()) {
      throw ShapeError(error_message("fused region", fmt::format("operand {} of {}", k, node_name(node)),
                                     fmt::format("an input of the region's shape {}", shape), operand->spec));
    }
    return direct_input(it->second);
  };

  std::unordered_map<const Node*, bool> absorbed;
  const std::unordered_map<const Node*, Affine> affine =
      find_affine(table, nodes, outputs, input_index, absorbed);
  // The constants 1, -1 and -0 of f32 (0..2) and f64 (3..5).
  auto constant = [&](DType t, int which) {
    return add_value({Value::Kind::Constant, (t == DType::F64 ? 3 : 0) + which, t});
  };

  for (const Node* node : nodes) {
    if (absorbed.contains(node)) continue;
    if (node->spec.shape != shape) {
      throw ShapeError(
          error_message("fused region", node_name(*node), "the region's shape " + shape.str(), ""));
    }
    if (node->op == Op::Broadcast) {
      auto it = input_index.find(node->operands[0].get());
      if (it == input_index.end()) {
        throw DeviceError(error_message("fused region", node_name(*node), "a broadcast of a region input",
                                        "one of " + node_name(*node->operands[0])));
      }
      BroadcastMap map = make_broadcast_map(node->operands[0]->spec.shape, shape, node->attrs.axes);
      if (map.identity()) {
        value_of[node] = direct_input(it->second);
        continue;
      }
      bool pattern = map.period <= kTile;
      g.loads.push_back({it->second, std::move(map), node->spec.dtype, pattern});
      value_of[node] = add_value({pattern ? Value::Kind::Pattern : Value::Kind::Gather,
                                  static_cast<int>(g.loads.size()) - 1, node->spec.dtype});
      continue;
    }
    if (!is_elementwise(node->op)) {
      throw DeviceError(
          error_message("fused region", node_name(*node), "an elementwise op or a broadcast load", ""));
    }
    Instruction step;
    if (auto it = affine.find(node); it != affine.end()) {
      const Affine& a = it->second;
      DType t = node->spec.dtype;
      step.kernels.push_back(table.affine[static_cast<int>(node->op)][static_cast<int>(t)]);
      step.operands = {operand_value(*node, a.x, 0),
                       a.scale ? operand_value(*node, a.scale, 1) : constant(t, a.negate ? 1 : 0),
                       a.shift ? operand_value(*node, a.shift, 2) : constant(t, 2)};
      step.result = add_value({Value::Kind::Computed, 0, t});
      step.affine = true;
      value_of[node] = step.result;
      g.steps.push_back(std::move(step));
      continue;
    }
    step.kernels.push_back(op_kernel(table, *node));
    if (is_narrow(node->spec.dtype) && !op_has(node->op, kExact) && node->op != Op::AsType &&
        node->op != Op::Bitcast) {
      step.kernels.push_back(table.round[static_cast<int>(node->spec.dtype)]);
    }
    for (size_t k = 0; k < node->operands.size(); ++k)
      step.operands.push_back(operand_value(*node, node->operands[k].get(), k));
    step.result = add_value({Value::Kind::Computed, 0, node->spec.dtype});
    value_of[node] = step.result;
    g.steps.push_back(std::move(step));
  }
  for (const Node* out : outputs) {
    auto it = value_of.find(out);
    if (it == value_of.end()) {
      throw DeviceError(
          error_message("fused region", "output " + node_name(*out), "a node of the region", ""));
    }
    g.outputs.push_back(it->second);
  }
  return g;
}

// Assigns slots and scratch. `direct`: outputs are written in place.
TilePlan make_tile_plan(const KernelTable& table, const Graph& g, const std::vector<const Node*>& outputs,
                        int64_t tile, bool direct) {
  TilePlan plan;
  int64_t scratch = 0;  // bytes after the slot pointers
  auto take = [&](int64_t bytes) {
    int64_t at = scratch;
    scratch += align_up(bytes);
    return at;
  };
  auto add_slot = [&](TileSlot s) {
    plan.slots.push_back(s);
    return static_cast<int>(plan.slots.size()) - 1;
  };
  auto compute_bytes = [](DType t) { return int64_t{dtype_size(compute_dtype(t))}; };

  // A pattern read only as a scalar needs its period, not a tile's length.
  std::vector<bool> read_as_tile(g.values.size(), false);
  for (const Instruction& step : g.steps) {
    for (size_t k = 0; k < step.operands.size(); ++k) {
      if (!step.affine || k == 0) read_as_tile[static_cast<size_t>(step.operands[k])] = true;
    }
  }
  for (int v : g.outputs) read_as_tile[static_cast<size_t>(v)] = true;

  std::vector<int> slot_of(g.values.size(), 0);
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& value = g.values[v];
    if (value.kind == Value::Kind::Input) {
      slot_of[v] = add_slot({SlotKind::Input, value.index, dtype_size(value.dtype), 0});
    } else if (value.kind == Value::Kind::Constant) {
      slot_of[v] = add_slot({SlotKind::Constant, value.index, dtype_size(value.dtype), 0});
    } else if (value.kind != Value::Kind::Computed) {
      const Load& load = g.loads[static_cast<size_t>(value.index)];
      Kernel widen = is_narrow(load.dtype) ? table.widen[static_cast<int>(load.dtype)] : nullptr;
      int64_t stored = dtype_size(load.dtype), cbytes = compute_bytes(load.dtype);
      if (load.pattern) {
        RepeatedLoad p{load.input, load.map, stored, cbytes, 0, -1, widen};
        p.length = read_as_tile[v] ? tile + load.map.period - 1 : load.map.period;
        p.offset = take(p.length * cbytes);
        if (widen) p.staging = take(load.map.period * stored);
        plan.patterns.push_back(std::move(p));
        slot_of[v] = add_slot({SlotKind::Pattern, static_cast<int>(plan.patterns.size()) - 1, cbytes, 0});
      } else {
        Gather gather{load.input, load.map, stored, 0, -1, widen};
        gather.slot = add_slot({SlotKind::Scratch, 0, cbytes, take(tile * cbytes)});
        if (widen) gather.staging = take(tile * stored);
        plan.gathers.push_back(std::move(gather));
        slot_of[v] = plan.gathers.back().slot;
      }
    }
  }

  // Last step reading each value; outputs stored at the end live to the end.
  constexpr int kForever = 1 << 30;
  std::vector<int> last_use(g.values.size(), -1);
  for (size_t s = 0; s < g.steps.size(); ++s) {
    for (int v : g.steps[s].operands) last_use[static_cast<size_t>(v)] = static_cast<int>(s);
  }
  std::vector<bool> written(outputs.size(), false);
  std::vector<int> output_slot(outputs.size(), 0);
  for (size_t k = 0; k < outputs.size(); ++k) {
    output_slot[k] = add_slot({SlotKind::Output, static_cast<int>(k), dtype_size(outputs[k]->spec.dtype), 0});
  }
  // Scratch buffers of one tile, free lists by size.
  std::unordered_map<int64_t, std::vector<int>> free_slots;
  auto scratch_slot = [&](DType t) {
    int64_t bytes = compute_bytes(t);
    auto& list = free_slots[bytes];
    if (!list.empty()) {
      int id = list.back();
      list.pop_back();
      return id;
    }
    return add_slot({SlotKind::Scratch, 0, bytes, take(tile * bytes)});
  };
  for (size_t s = 0; s < g.steps.size(); ++s) {
    const Instruction& step = g.steps[s];
    const auto result = static_cast<size_t>(step.result);
    const DType dtype = g.values[result].dtype;
    int out = 0;
    for (size_t k = 0; k < outputs.size() && out == 0; ++k) {
      if (g.outputs[k] != step.result) continue;
      if (direct && !is_narrow(dtype)) {
        out = output_slot[k];
        written[k] = true;
      } else {
        last_use[result] = kForever;
      }
    }
    if (out == 0) out = scratch_slot(dtype);
    slot_of[result] = out;
    Instr instr{step.kernels[0], out};
    int* args[] = {&instr.a, &instr.b, &instr.c};
    for (size_t k = 0; k < step.operands.size(); ++k)
      *args[k] = slot_of[static_cast<size_t>(step.operands[k])];
    plan.instrs.push_back(instr);
    for (size_t k = 1; k < step.kernels.size(); ++k) plan.instrs.push_back({step.kernels[k], out, out});
    // Operands dead after this step give their buffers back (the result
    // already has its own: kernels never write over their operands).
    for (int v : step.operands) {
      const auto u = static_cast<size_t>(v);
      const TileSlot& slot = plan.slots[static_cast<size_t>(slot_of[u])];
      bool dies = last_use[u] == static_cast<int>(s) && g.values[u].kind == Value::Kind::Computed;
      if (dies && slot.kind == SlotKind::Scratch) {
        free_slots[slot.bytes].push_back(slot_of[u]);
        last_use[u] = -1;  // an operand used twice by this step is freed once
      }
    }
    if (last_use[result] < 0 && plan.slots[static_cast<size_t>(out)].kind == SlotKind::Scratch) {
      free_slots[compute_bytes(dtype)].push_back(out);  // computed but never read
    }
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (written[k]) continue;
    DType t = outputs[k]->spec.dtype;
    Kernel store = is_narrow(t) ? table.narrow[static_cast<int>(t)]
                                : table.bitcast[static_cast<int>(t)][static_cast<int>(t)];
    plan.instrs.push_back({store, output_slot[k], slot_of[static_cast<size_t>(g.outputs[k])]});
  }
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const TileSlot& slot = plan.slots[s];
    if (slot.kind == SlotKind::Scratch || slot.kind == SlotKind::Null || slot.kind == SlotKind::Constant)
      continue;
    Moving m{static_cast<int>(s), slot.kind, slot.index, slot.bytes};
    if (slot.kind == SlotKind::Pattern) {
      m.offset = plan.patterns[static_cast<size_t>(slot.index)].offset;
      m.period = plan.patterns[static_cast<size_t>(slot.index)].map.period;
    } else {
      // The next tile's bytes, spread over the instructions in whole lines.
      auto steps = static_cast<int64_t>(std::max<size_t>(plan.instrs.size(), 1));
      m.prefetch = align_up((tile * slot.bytes + steps - 1) / steps);
    }
    plan.moving.push_back(m);
  }
  plan.slots_offset = align_up(static_cast<int64_t>(plan.slots.size() * sizeof(void*)));
  plan.scratch_bytes = plan.slots_offset + scratch;
  return plan;
}

}  // namespace

RegionProgram compile_region(const KernelTable& table, const std::vector<const Node*>& nodes,
                             const std::vector<const Node*>& inputs,
                             const std::vector<const Node*>& outputs) {
  if (nodes.empty()) throw DeviceError(error_message("fused region", "", "at least one node", "none"));
  const Shape& shape = nodes.front()->spec.shape;
  RegionProgram p;
  p.elements = shape.size();
  p.tile = std::max<int64_t>(1, std::min(kTile, p.elements));
  Graph g = build_graph(table, nodes, inputs, outputs, shape);
  p.direct = make_tile_plan(table, g, outputs, p.tile, true);
  p.safe = make_tile_plan(table, g, outputs, p.tile, false);
  for (const Node* n : inputs) p.input_bytes.push_back(n->spec.bytes());
  for (const Node* n : outputs) p.output_bytes.push_back(n->spec.bytes());
  p.input_broadcast.assign(inputs.size(), false);
  for (const Load& load : g.loads) p.input_broadcast[static_cast<size_t>(load.input)] = true;
  for (size_t i = 0; i < inputs.size(); ++i) p.io_bytes += p.input_broadcast[i] ? 0 : p.input_bytes[i];
  for (int64_t b : p.output_bytes) p.io_bytes += b;
  return p;
}

}  // namespace sluice::cpu
