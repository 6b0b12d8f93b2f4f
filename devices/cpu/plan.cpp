#include <sluice/devices/cpu/plan.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <sluice/devices/detail/host_memory.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/loop.h>
#include <sluice/base/error.h>
#include <sluice/ops/passes/passes.h>
#include <sluice/ops/detail/results.h>

namespace sluice::cpu {
namespace {

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
        throw InternalError(
            error_message("host", "a parameter has no kernel: it is an argument of the run", "", ""));
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
        throw InternalError(error_message(
            "host", std::string(op_name(node.op)) + " has several results: run_node_results runs it", "",
            ""));
      void* const outs[] = {out};
      return run_linalg(node, in, outs);
    }
    case OpFamily::Block:
      throw InternalError(error_message(
          "host",
          "a block has several results: run_node_results runs a native one, and inline_blocks the rest", "",
          ""));
    case OpFamily::Loop:
      throw InternalError(error_message(
          "host", std::string(op_name(node.op)) + " runs as a step of a plan (loop.h), not as one node", "",
          ""));
    case OpFamily::Result:
      throw InternalError(
          error_message("host", "a result is written by the step of the node it reads", "", ""));
  }
}

void run_node_results(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  if (node.op == Op::Block) return run_native_block(node, in, out);
  if (op_family(node.op) != OpFamily::LinAlg)
    throw InternalError(error_message(
        "host", std::string(op_name(node.op)) + " runs as a step of a plan (loop.h), not as one node", "",
        ""));
  run_linalg(node, in, out);
}

Plan make_plan(const Function& f) {
  Plan plan;
  // Loops are compiled as the lowering meets them: it asks for their scratch.
  std::unordered_map<const Node*, std::shared_ptr<const CompiledLoop>> loops;
  LoweringRules rules{.alignment = static_cast<int64_t>(kHostAlignment),
                      .several_results = [&](const Node& node) -> StepNeeds {
                        if (op_family(node.op) != OpFamily::Loop) return {};
                        auto loop = std::make_shared<const CompiledLoop>(node);
                        StepNeeds needs{loop->scratch_bytes(), loop->work()};
                        loops.emplace(&node, std::move(loop));
                        return needs;
                      }};
  // Blocks without a native kernel here run their fallbacks.
  const Function inlined = passes::inline_blocks(f, [](const Node& n) { return has_native_block(n); });
  plan.lowered =
      lower(passes::fold_constants(passes::eliminate_common_subexpressions(inlined), evaluate), rules);
  for (const LoweredUnit& step : plan.lowered.steps) {
    Instruction ins;
    if (step.region)
      ins.region = std::make_unique<FusedRegion>(step.nodes, step.reads, step.writes);
    else if (auto it = loops.find(&step.node()); it != loops.end())
      ins.loop = it->second;
    plan.instructions.push_back(std::move(ins));
  }
  for (const Node* c : plan.lowered.constants) {
    const Literal& lit = *c->attrs.literal;
    std::shared_ptr<void> memory = host_allocate(lit.bytes.size());
    if (!lit.bytes.empty()) std::memcpy(memory.get(), lit.bytes.data(), lit.bytes.size());
    plan.constants.push_back(std::move(memory));
  }
  return plan;
}

}  // namespace sluice::cpu
