// slice and put_slice: a box copy out of, or into, a window of x. Starts are
// static (attrs.starts) or dynamic (s64 scalar operands, one per axis, as the
// builders convert them); both are clamped so the window fits, as Nx clamps.

#include <algorithm>
#include <string>

#include <sluice/devices/cpu/kernels/shape_box.h>
#include <sluice/devices/cpu/kernels/shape_ops.h>
#include <sluice/ops/error.h>
#include <sluice/ops/error_format.h>

namespace sluice::cpu {
namespace {

// The start of each axis of x, clamped to [0, dim - window dim]. Dynamic
// starts are operands first, first + 1, ...
std::array<int64_t, kMaxRank> clamped_starts(const Node& node, std::span<const void* const> in, size_t first,
                                             const Shape& x, const std::vector<int64_t>& window) {
  const bool dynamic = node.attrs.starts.empty() && x.rank() > 0;
  if (dynamic && in.size() < first + static_cast<size_t>(x.rank())) {
    throw DeviceError(error_message(op_name(node.op), "start indices",
                                    fmt::format("{} operands after operand {}", x.rank(), first - 1),
                                    in.size() - std::min(in.size(), first)));
  }
  std::array<int64_t, kMaxRank> starts{};
  for (int j = 0; j < x.rank(); ++j) {
    const int64_t start = dynamic ? *static_cast<const int64_t*>(in[first + j]) : node.attrs.starts[j];
    starts[j] = std::clamp<int64_t>(start, 0, x.dim(j) - window[j]);
  }
  return starts;
}

}  // namespace

// slice x [start : start + length : stride] per axis; the result has
// ceil(length / stride) elements along each axis.
void run_slice(const Node& node, std::span<const void* const> in, void* out) {
  const Spec& x = node.operands[0]->spec;
  const Shape& shape = node.spec.shape;
  if (shape.size() == 0) return;
  const auto starts = clamped_starts(node, in, 1, x.shape, node.attrs.lengths);
  const auto x_strides = row_major_strides(x.shape);
  const auto out_strides = row_major_strides(shape);
  Box box;
  int64_t first = 0;
  for (int j = 0; j < shape.rank(); ++j) {
    const int64_t stride = node.attrs.strides.empty() ? 1 : node.attrs.strides[j];
    box.push(shape.dim(j), out_strides[j], x_strides[j] * stride);
    first += starts[j] * x_strides[j];
  }
  copy_box(elem_size(x), element(in[0], first, x), out, box);
}

// The result is x (copied unless the planner aliased it to out) with update
// written over the window at the starts.
void run_put_slice(const Node& node, std::span<const void* const> in, void* out) {
  const Spec& x = node.operands[0]->spec;
  const Spec& update = node.operands[1]->spec;
  if (in[0] != out) {
    Box all;
    all.push(x.size(), 1, 1);
    copy_box(elem_size(x), in[0], out, all);
  }
  if (update.size() == 0) return;
  const auto starts = clamped_starts(node, in, 2, x.shape, update.shape.dims());
  const auto x_strides = row_major_strides(x.shape);
  const auto update_strides = row_major_strides(update.shape);
  Box box;
  int64_t first = 0;
  for (int j = 0; j < x.shape.rank(); ++j) {
    box.push(update.shape.dim(j), x_strides[j], update_strides[j]);
    first += starts[j] * x_strides[j];
  }
  copy_box(elem_size(x), in[1], element(out, first, x), box);
}

}  // namespace sluice::cpu
