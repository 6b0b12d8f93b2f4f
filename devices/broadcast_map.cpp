#include <sluice/devices/detail/broadcast_map.h>

namespace sluice {

BroadcastMap make_broadcast_map(const Shape& operand, const Shape& output, const std::vector<int64_t>& axes) {
  std::vector<int64_t> stride_of_output_axis(static_cast<size_t>(output.rank()), 0);
  std::vector<int64_t> operand_strides = operand.strides();
  for (int i = 0; i < operand.rank(); ++i) {
    auto axis = static_cast<size_t>(axes[static_cast<size_t>(i)]);
    if (operand.dim(i) != 1) stride_of_output_axis[axis] = operand_strides[static_cast<size_t>(i)];
  }
  BroadcastMap map;
  for (int j = 0; j < output.rank(); ++j) {
    int64_t dim = output.dim(j), stride = stride_of_output_axis[static_cast<size_t>(j)];
    if (dim == 1) continue;
    // Merge with the previous (outer) axis when stepping it is the same as
    // stepping this one `dim` times.
    if (!map.dims.empty() && map.strides.back() == stride * dim) {
      map.dims.back() *= dim;
      map.strides.back() = stride;
    } else {
      map.dims.push_back(dim);
      map.strides.push_back(stride);
    }
  }
  if (map.dims.empty()) {
    map.dims = {1};
    map.strides = {0};
  }
  int64_t total = 1;
  for (int64_t d : map.dims) total *= d;
  // An empty output has period 0: there is nothing to repeat (and dividing
  // by its zero-sized axis would trap).
  map.period = map.strides[0] == 0 && map.dims[0] != 0 ? total / map.dims[0] : total;
  return map;
}

}  // namespace sluice
