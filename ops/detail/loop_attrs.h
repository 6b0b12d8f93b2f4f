#pragma once
// What a loop node carries beside its operands (Attrs::loop): its traced
// bodies and how its operands divide. A loop's operands are, in order, the
// carry's initial values, the stacked inputs xs (scan only), and the outer
// values its bodies capture, lifted out of them (as JAX lifts a scan's
// consts), so that each body is a self-contained Function. Every body takes
// the same parameters in that order, one x (a row of each xs) in place of xs:
//   scan:        body (carry..., x..., captured...) -> (new carry..., y...)
//   while_loop:  cond (carry..., captured...) -> pred[]
//                body (carry..., captured...) -> (new carry...)
// A loop has several results (the carry's final values, then for a scan each
// y stacked to [length, ...]), read through `result` nodes (ops/detail/results.h).
// CSE merges equal loops (bodies compared structurally) and then their equal
// results.

#include <cstdint>
#include <vector>

#include <sluice/ops/function.h>

namespace sluice {

struct LoopAttrs {
  Function body;
  Function cond;         // while_loop; empty for a scan
  int64_t carries = 0;   // carry tensors: the first operands and results
  int64_t xs = 0;        // scan: stacked inputs, after the carry
  int64_t length = 0;    // scan: steps
  bool reverse = false;  // scan: from the last row of xs to the first (ys still stored at their index)

  // Operands after the carry and xs.
  int64_t captured() const { return static_cast<int64_t>(body.inputs().size()) - carries - xs; }
  // The loop's results: the carry's specs, then each y's spec stacked to [length, ...].
  std::vector<Spec> result_specs() const;

  bool operator==(const LoopAttrs& o) const;
  uint64_t hash() const;
};

}  // namespace sluice
