// The shape ops that only re-stride their operand: reshape, broadcast,
// transpose, reverse. Each is one box copy.

#include <cstddef>

#include <sluice/devices/cpu/kernels/shape_box.h>
#include <sluice/devices/cpu/kernels/shape_ops.h>

namespace sluice::cpu {

// Row-major order is unchanged: a plain copy, unless the planner has already
// made the result alias the operand.
void run_reshape(const Node& node, std::span<const void* const> in, void* out) {
  if (in[0] == out) return;
  Box box;
  box.push(node.spec.size(), 1, 1);
  copy_box(elem_size(node.spec), in[0], out, box);
}

// Operand axis i becomes output axis attrs.axes[i]; output axes the operand
// lacks, and operand axes of size 1, repeat (input stride 0).
void run_broadcast(const Node& node, std::span<const void* const> in, void* out) {
  const Shape& shape = node.spec.shape;
  const Shape& x = node.operands[0]->spec.shape;
  const auto out_strides = row_major_strides(shape);
  const auto x_strides = row_major_strides(x);
  Box box;
  for (int j = 0; j < shape.rank(); ++j) box.push(shape.dim(j), out_strides[j], 0);
  for (int i = 0; i < x.rank(); ++i) {
    if (x.dim(i) != 1) box.in_strides[node.attrs.axes[i]] = x_strides[i];
  }
  copy_box(elem_size(node.spec), in[0], out, box);
}

// Output axis j walks input axis attrs.axes[j].
void run_transpose(const Node& node, std::span<const void* const> in, void* out) {
  const Shape& shape = node.spec.shape;
  const auto out_strides = row_major_strides(shape);
  const auto x_strides = row_major_strides(node.operands[0]->spec.shape);
  Box box;
  for (int j = 0; j < shape.rank(); ++j)
    box.push(shape.dim(j), out_strides[j], x_strides[node.attrs.axes[j]]);
  copy_box(elem_size(node.spec), in[0], out, box);
}

// Reversed axes are read from their last element backwards.
void run_reverse(const Node& node, std::span<const void* const> in, void* out) {
  const Shape& shape = node.spec.shape;
  if (shape.size() == 0) return;
  const auto strides = row_major_strides(shape);
  Box box;
  for (int j = 0; j < shape.rank(); ++j) box.push(shape.dim(j), strides[j], strides[j]);
  int64_t first = 0;
  for (int64_t axis : node.attrs.axes) {
    first += (shape.dim(static_cast<int>(axis)) - 1) * strides[axis];
    box.in_strides[axis] = -strides[axis];
  }
  copy_box(elem_size(node.spec), element(in[0], first, node.spec), out, box);
}

}  // namespace sluice::cpu
