// Shape ops on the host: the box copies of devices/detail/shape_copies.h, each
// moved by copy_box, dynamic starts read from their operands.

#include <algorithm>

#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/shape_box.h>
#include <sluice/devices/detail/shape_copies.h>

namespace sluice::cpu {

void run_shape(const Node& node, std::span<const void* const> in, void* out) {
  const ShapeCopies plan = shape_copies(node);
  const size_t size = elem_size(node.spec);
  int64_t moved = 0;  // the dynamic starts' offset, in elements
  if (plan.dynamic) {
    const DynamicStarts& d = *plan.dynamic;
    for (int j = 0; j < d.rank; ++j)
      moved += std::clamp<int64_t>(*static_cast<const int64_t*>(in[d.first_operand + static_cast<size_t>(j)]), 0,
                                   d.max_start[j]) *
               d.stride[j];
  }
  for (size_t i = 0; i < plan.copies.size(); ++i) {
    const BoxCopy& c = plan.copies[i];
    const void* source = in[static_cast<size_t>(c.source)];
    if (c.whole && source == out) continue;
    const bool last = i + 1 == plan.copies.size();
    const int64_t from = c.source_offset + (last && plan.dynamic && plan.dynamic->on_source ? moved : 0);
    const int64_t to = c.result_offset + (last && plan.dynamic && !plan.dynamic->on_source ? moved : 0);
    copy_box(size, static_cast<const std::byte*>(source) + from * static_cast<int64_t>(size),
             static_cast<std::byte*>(out) + to * static_cast<int64_t>(size), c.box);
  }
}

}  // namespace sluice::cpu
