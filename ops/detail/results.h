#pragma once
// Nodes with several results: loops (scan, while_loop), qr, lu and eigh
// (the catalogue marks them kMultiResult). A node has one spec, so such a
// node holds no value of its own (multi_result_spec(), no bytes) and each
// result is a `result` node reading it, attrs.index saying which (as XLA's
// get-tuple-element). Everything else follows from that one mechanism:
// CSE merges equal nodes and then their equal results; constant folding
// leaves them alone; the autodiff pass gathers the results' cotangents and
// calls the node's rule with all of them; a backend places every result of
// the node (those nothing reads included) and runs it as one step.

#include <vector>

#include <sluice/ops/expr.h>

namespace sluice {

// The spec of a node with several results: u8[0], no bytes.
Spec multi_result_spec();

// The specs of a kMultiResult node's results, in order (a loop's from its
// attrs, a linear algebra op's from shape inference).
std::vector<Spec> result_specs(const Node& node);

}  // namespace sluice
