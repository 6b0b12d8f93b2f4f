// Blocks a backend has no native kernel for become their fallbacks' graphs.
#include <unordered_map>

#include <sluice/ops/detail/block_attrs.h>
#include <sluice/ops/passes/graph_walk.h>
#include <sluice/ops/passes/passes.h>

namespace sluice::passes {

Function inline_blocks(const Function& f, const NativeBlock& native) {
  Function current = f;
  // A fallback may itself hold blocks: again until none is left to inline.
  for (;;) {
    std::unordered_map<const Node*, Tuple> inlined;  // block -> its fallback's outputs over its operands
    const Function next = rebuild(current, [&](const NodePtr& node) -> NodePtr {
      if (node->op == Op::Block && !(native && native(*node))) {
        inlined.emplace(node.get(), call(node->attrs.block->fallback,
                                         Tuple(node->operands.begin(), node->operands.end())));
        return node;  // read by its results alone, which are replaced below
      }
      if (node->op == Op::Result && node->operands[0]->op == Op::Block)
        if (auto it = inlined.find(node->operands[0].get()); it != inlined.end())
          return it->second.at(static_cast<size_t>(node->attrs.index)).node();
      return node;
    });
    if (inlined.empty()) return next;
    current = next;
  }
}

}  // namespace sluice::passes
