#include <sluice/devices/cuda/cuda_steps.h>

#include <string>

#include <sluice/base/error.h>

namespace sluice::cuda {

std::unique_ptr<CudaUnit> make_step(const LoweredUnit& step, CudaDevice& device) {
  if (step.region) return make_region_step(step, device);
  const Node& node = step.node();
  switch (op_family(node.op)) {
    case OpFamily::Leaf: return make_creation_step(node, device);
    case OpFamily::Shape: return make_shape_step(node, device);
    case OpFamily::Reduce: return make_reduce_step(node, device);
    case OpFamily::Dot: return make_dot_step(node, device);
    case OpFamily::Fft: return make_fft_step(node, device);
    case OpFamily::Window: return make_window_step(node, device);
    case OpFamily::Scan: return make_scan_step(node, device);
    case OpFamily::Index: return make_index_step(node, device);
    case OpFamily::Sort: return make_sort_step(node, device);
    case OpFamily::Loop: return make_loop_step(node, device);
    case OpFamily::Conv: return make_conv_step(node, device);
    case OpFamily::LinAlg: return make_linalg_step(node, device);
    default: break;
  }
  // capabilities() and declines() keep every other op from reaching here.
  throw InternalError(error_message(
      "cuda", "no step for op " + std::string(op_name(node.op)) + " (" + step.what + ")", "", ""));
}

}  // namespace sluice::cuda
