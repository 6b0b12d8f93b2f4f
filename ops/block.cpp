// Blocks: the builder, the gradient rules registered by name, and grad_block.
#include <sluice/ops/block.h>

#include <mutex>
#include <unordered_map>

#include <sluice/ops/autodiff.h>
#include <sluice/ops/detail/block_attrs.h>
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/detail/hash.h>
#include <sluice/ops/detail/results.h>
#include <sluice/ops/detail/shape_inference.h>
#include <sluice/ops/ops.h>

namespace sluice {

uint64_t BlockAttrs::hash() const {
  return detail::Hasher().add_bytes(name.data(), name.size()).add(fallback.hash()).value();
}

Tuple block(const std::string& name, const Function& fallback, const std::vector<Expr>& args) {
  if (name.empty())
    infer::type_error("block", "name", "the name of the block (what a native kernel answers to)", "\"\"");
  const std::string op = "block '" + name + "'";
  if (fallback.outputs().empty()) infer::shape_error(op, "fallback", "a function with outputs", "none");
  detail::check_arguments(op, fallback, args);
  Attrs attrs;
  attrs.block = std::make_shared<const BlockAttrs>(BlockAttrs{name, fallback});
  return detail::make_results(Op::Block, fallback.output_specs(), args, std::move(attrs));
}

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<std::string, BlockGradient> rules;
};

Registry& registry() {
  static Registry r;
  return r;
}

BlockGradient registered(const std::string& name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.rules.find(name);
  return it == r.rules.end() ? BlockGradient{} : it->second;
}

}  // namespace

void register_block_gradient(const std::string& name, BlockGradient rule) {
  if (name.empty()) infer::type_error("register_block_gradient", "name", "a block's name", "\"\"");
  if (!rule) infer::type_error("register_block_gradient", "rule", "a function", "none");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.rules[name] = std::move(rule);
}

namespace grad_rules {

std::vector<Expr> grad_block(const NodePtr& node, const std::vector<Expr>& result_cts) {
  const BlockAttrs& b = *node->attrs.block;
  const Tuple args(node->operands.begin(), node->operands.end());
  if (BlockGradient rule = registered(b.name)) {
    Tuple outputs;
    const std::vector<Spec> specs = result_specs(*node);
    for (size_t i = 0; i < specs.size(); ++i)
      outputs.push_back(detail::result_of(node, static_cast<int64_t>(i), specs[i]));
    std::vector<Expr> cts = rule(args, outputs, result_cts);
    if (cts.size() != args.size())
      infer::shape_error("grad", "block '" + b.name + "'",
                         infer::cat(args.size(), " cotangents from its rule (one per argument)"),
                         infer::cat(cts.size()));
    for (size_t i = 0; i < cts.size(); ++i)
      if (cts[i] && cts[i].spec() != args[i].spec())
        infer::shape_error("grad", "block '" + b.name + "'",
                           infer::cat("argument ", i, "'s cotangent of ", args[i].spec().str()),
                           cts[i].spec().str());
    return cts;
  }
  // The fallback's: the gradient of sum(output * its cotangent) over the
  // outputs that have one, with respect to the real floating arguments.
  const std::vector<Spec>& in = b.fallback.inputs();
  const std::vector<Spec> out = b.fallback.output_specs();
  std::vector<int> wrt;
  for (size_t i = 0; i < in.size(); ++i)
    if (is_float(in[i].dtype)) wrt.push_back(static_cast<int>(i));
  std::vector<size_t> with_ct;
  for (size_t j = 0; j < out.size(); ++j)
    if (result_cts[j]) with_ct.push_back(j);
  std::vector<Expr> cts(args.size());
  if (wrt.empty() || with_ct.empty()) return cts;
  for (const std::vector<Spec>* specs : {&in, &out})
    for (const Spec& s : *specs)
      if (is_complex(s.dtype))
        infer::type_error(
            "grad", "block '" + b.name + "'",
            "real values in its fallback (a gradient through a complex block needs a registered rule)",
            s.str());
  const Function pullback = pullback_of(b.fallback, with_ct, wrt);
  Tuple pull_args = args;
  for (size_t j : with_ct) pull_args.push_back(result_cts[j]);
  const Tuple g = call(pullback, pull_args);
  for (size_t k = 0; k < wrt.size(); ++k) cts[static_cast<size_t>(wrt[k])] = g[k];
  return cts;
}

}  // namespace grad_rules
}  // namespace sluice
