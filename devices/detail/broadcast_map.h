#pragma once
// Broadcast loads of a fused region, for every backend: where the elements
// of the region's output come from in a smaller operand. The output's axes
// are simplified first: size-1 axes dropped, neighbours that step through
// the operand contiguously merged. What remains is usually one of a few
// shapes (a scalar, a row repeated, a column repeated, the operand itself),
// and a backend picks its fastest path from the map's properties.
// Internal to the devices layer.

#include <cstdint>
#include <vector>

#include <sluice/ops/shape.h>

namespace sluice {

struct BroadcastMap {
  // The simplified output axes, outermost first, and the operand's stride
  // (in elements) along each; 0 where the operand is repeated.
  std::vector<int64_t> dims, strides;
  // The output repeats with this period (in elements): the product of the
  // axes inside a repeated outermost axis; the whole output otherwise.
  int64_t period = 0;
  // The output is the operand itself, element for element.
  bool identity() const { return dims.size() == 1 && strides[0] == 1; }
};

// operand: the operand's shape; output: the broadcast's shape; axes[i]: the
// output axis of operand axis i (Attrs::axes of a Broadcast node).
BroadcastMap make_broadcast_map(const Shape& operand, const Shape& output, const std::vector<int64_t>& axes);

}  // namespace sluice
