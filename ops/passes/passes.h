#pragma once
// Graph passes over a traced Function. They know nothing of devices: a
// backend runs them before lowering (devices/cpu/plan.cpp).

#include <functional>
#include <vector>

#include <sluice/ops/function.h>

namespace sluice::passes {

// Merges structurally equal subgraphs, so each distinct value is computed
// once, and removes stop_gradient marks (identities once grad has run).
Function eliminate_common_subexpressions(const Function& f);

// Evaluates one node whose operands are all known; supplied by a backend so
// that constant folding and execution share one implementation of every op.
using Evaluator = std::function<Literal(const Node& node, const std::vector<const Literal*>& operands)>;
// Replaces subgraphs whose leaves are all constants by constants. Results
// larger than `max_elements` stay computed (folding broadcast(0.0) into a
// 16M-element literal would cost memory, not save time).
Function fold_constants(const Function& f, const Evaluator& eval, int64_t max_elements = 1024);

// Whether a backend runs a block node natively (ops/block.h).
using NativeBlock = std::function<bool(const Node& block)>;
// Replaces each block that `native` does not claim (all of them when it is
// empty) by its fallback's graph over the block's operands, fallbacks'
// blocks included: what a backend runs instead of a kernel it lacks.
Function inline_blocks(const Function& f, const NativeBlock& native = {});

// One unit of work after fusion: a single node, or a fused region of
// elementwise nodes that all have the same shape and are computed in one
// pass over memory.
struct WorkUnit {
  // Topological order. One node for a plain step; for a region, its nodes,
  // where a Broadcast may appear only as a load of a value from outside.
  std::vector<const Node*> nodes;
  // Values from outside the step that it reads, in a fixed order.
  std::vector<const Node*> inputs;
  // Values of the step needed by later steps or as function outputs.
  std::vector<const Node*> outputs;
  bool fused = false;  // true: nodes form an elementwise region
};

// Orders f's nodes into steps, grouping chains of elementwise ops (and
// broadcasts feeding them) into fused regions. Parameters are not steps.
// The Function must outlive the returned steps (they point into its nodes).
std::vector<WorkUnit> schedule(const Function& f);

}  // namespace sluice::passes
