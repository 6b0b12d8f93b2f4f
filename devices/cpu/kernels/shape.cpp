#include <string>

#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/shape_ops.h>
#include <sluice/ops/error.h>

namespace sluice::cpu {

void run_shape(const Node& node, std::span<const void* const> in, void* out) {
  switch (node.op) {
    case Op::Reshape: return run_reshape(node, in, out);
    case Op::Broadcast: return run_broadcast(node, in, out);
    case Op::Transpose: return run_transpose(node, in, out);
    case Op::Pad: return run_pad(node, in, out);
    case Op::Reverse: return run_reverse(node, in, out);
    case Op::Slice: return run_slice(node, in, out);
    case Op::PutSlice: return run_put_slice(node, in, out);
    case Op::Concatenate: return run_concatenate(node, in, out);
    default: break;
  }
  throw DeviceError(
      "run_shape: expected a shape op (reshape, broadcast, transpose, pad, reverse, slice, "
      "put_slice, concatenate), found " +
      std::string(op_name(node.op)));
}

}  // namespace sluice::cpu
