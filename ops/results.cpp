#include <sluice/ops/detail/results.h>

#include <sluice/ops/detail/block_attrs.h>
#include <sluice/ops/detail/loop_attrs.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

Spec multi_result_spec() { return {DType::U8, Shape{0}}; }

std::vector<Spec> result_specs(const Node& node) {
  if (node.attrs.loop) return node.attrs.loop->result_specs();
  if (node.attrs.block) return node.attrs.block->fallback.output_specs();
  if (op_family(node.op) == OpFamily::LinAlg)
    return infer::linalg_results(node.op, node.operands[0]->spec, node.attrs.linalg);
  throw InternalError(
      error_message("result_specs", infer::cat(op_name(node.op), " has one result, not several"), "", ""));
}

}  // namespace sluice
