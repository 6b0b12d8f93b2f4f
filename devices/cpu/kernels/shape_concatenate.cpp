// concatenate: each operand is a box copied into its band of the result
// along attrs.axis.

#include <sluice/devices/cpu/kernels/shape_box.h>
#include <sluice/devices/cpu/kernels/shape_ops.h>
#include <sluice/devices/cpu/kernels/split_work.h>

namespace sluice::cpu {

void run_concatenate(const Node& node, std::span<const void* const> in, void* out) {
  const Shape& shape = node.spec.shape;
  if (shape.size() == 0) return;
  const int axis = static_cast<int>(node.attrs.axis);
  const auto out_strides = row_major_strides(shape);
  // Operands are the items, so that many small operands split across cores
  // as one large operand does (its own copy splits its rows).
  const auto count = static_cast<int64_t>(node.operands.size());
  split_work(count, shape.size() / count, [&](int64_t begin, int64_t end) {
    int64_t offset = 0;
    for (int64_t i = 0; i < begin; ++i) offset += node.operands[i]->spec.shape.dim(axis);
    for (int64_t i = begin; i < end; ++i) {
      const Shape& x = node.operands[i]->spec.shape;
      const auto x_strides = row_major_strides(x);
      Box box;
      for (int j = 0; j < x.rank(); ++j) box.push(x.dim(j), out_strides[j], x_strides[j]);
      copy_box(elem_size(node.spec), in[i], element(out, offset * out_strides[axis], node.spec), box);
      offset += x.dim(axis);
    }
  });
}

}  // namespace sluice::cpu
