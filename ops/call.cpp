// call: a Function's graph spliced into the function being traced.

#include <unordered_map>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/ops/function.h>
#include <sluice/ops/passes/graph_walk.h>

namespace sluice {

namespace detail {

void check_arguments(std::string_view op, const Function& f, const std::vector<Expr>& args) {
  const std::vector<Spec>& inputs = f.inputs();
  if (args.size() != inputs.size())
    throw ShapeError(error_message(op, "", fmt::format("{} arguments (the function's inputs)", inputs.size()),
                                   args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string arg = fmt::format("argument {}", i);
    if (!args[i]) throw ShapeError(error_message(op, arg, "a traced tensor", "none"));
    const Spec& given = args[i].spec();
    if (given.dtype != inputs[i].dtype) throw TypeError(error_message(op, arg, inputs[i], given));
    if (given.shape != inputs[i].shape) throw ShapeError(error_message(op, arg, inputs[i], given));
  }
}

}  // namespace detail

Tuple call(const Function& f, const std::vector<Expr>& args) {
  detail::check_arguments("call", f, args);
  // Operands before users, each node remade once over its replacements.
  std::unordered_map<const Node*, NodePtr> replaced;
  for (const NodePtr& node : passes::topological_order(f.outputs())) {
    if (node->op == Op::Parameter) {
      replaced.emplace(node.get(), args.at(static_cast<size_t>(node->attrs.index)).node());
      continue;
    }
    std::vector<NodePtr> operands;
    operands.reserve(node->operands.size());
    bool changed = false;
    for (const NodePtr& operand : node->operands) {
      operands.push_back(replaced.at(operand.get()));
      changed |= operands.back() != operand;
    }
    replaced.emplace(node.get(), changed ? Node::make(node->op, node->spec, std::move(operands), node->attrs) : node);
  }
  Tuple outputs;
  outputs.reserve(f.outputs().size());
  for (const Expr& out : f.outputs()) outputs.emplace_back(replaced.at(out.node().get()));
  return outputs;
}

}  // namespace sluice
