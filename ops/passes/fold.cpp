// Constant folding. Nodes are visited operands first, so a chain of constant
// ops folds in one walk: each node sees its operands already folded.
#include <sluice/base/error.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/passes/graph_walk.h>
#include <sluice/ops/passes/passes.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::passes {
namespace {

bool foldable(const Node& node, int64_t max_elements) {
  if (node.op == Op::Parameter || node.op == Op::Constant) return false;
  // A node with several results has no value of its own to become a
  // constant (and folding a loop would run it at compile time).
  if (has_several_results(node.op)) return false;
  if (node.spec.size() > max_elements) return false;
  for (const NodePtr& operand : node.operands) {
    if (operand->op != Op::Constant) return false;
  }
  return true;
}

}  // namespace

Function fold_constants(const Function& f, const Evaluator& eval, int64_t max_elements) {
  return rebuild(f, [&](const NodePtr& node) -> NodePtr {
    if (!foldable(*node, max_elements)) return node;
    std::vector<const Literal*> operands;
    operands.reserve(node->operands.size());
    for (const NodePtr& operand : node->operands) operands.push_back(operand->attrs.literal.get());
    Literal value = eval(*node, operands);
    if (value.spec != node->spec || static_cast<int64_t>(value.bytes.size()) != node->spec.bytes()) {
      throw InternalError(
          error_message(infer::cat("fold_constants: evaluating ", op_name(node->op)), "",
                        infer::cat("a literal of ", node->spec, " (", node->spec.bytes(), " bytes)"),
                        infer::cat(value.spec, " (", value.bytes.size(), " bytes)")));
    }
    // The builder's constant is strong, as a folded value must be: it has a
    // definite type now, whatever weak scalars it came from.
    return constant(value).node();
  });
}

}  // namespace sluice::passes
