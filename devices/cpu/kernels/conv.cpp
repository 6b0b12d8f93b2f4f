// Conv: oneDNN for f32 where it applies, im2col + gemm for the rest (conv.h).
// f16 and bf16 are widened to f32, convolved, rounded back, as dot does.

#include <cstring>
#include <memory>

#include <sluice/devices/cpu/kernels/conv.h>
#include <sluice/devices/cpu/kernels/isa.h>
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/ops/dtype.h>
#include <sluice/base/error.h>

namespace sluice::cpu {

namespace {

void conv_f32(const ConvGeometry& g, const float* x, const float* k, float* y) {
  if (!conv_dnnl(g, x, k, y)) conv_im2col(g, x, k, y);
}

// f16/bf16: widened to f32, convolved, rounded back.
void conv_half(const ConvGeometry& g, const Node& node, const void* x, const void* k, void* y) {
  const KernelTable& table = kernel_table();
  const int t = static_cast<int>(node.spec.dtype);
  const int64_t nx = node.operands[0]->spec.size(), nk = node.operands[1]->spec.size(), ny = node.spec.size();
  std::unique_ptr<float[]> fx(new float[static_cast<size_t>(nx)]), fk(new float[static_cast<size_t>(nk)]),
      fy(new float[static_cast<size_t>(ny)]);
  table.widen[t](fx.get(), x, nullptr, nullptr, nx);
  table.widen[t](fk.get(), k, nullptr, nullptr, nk);
  conv_f32(g, fx.get(), fk.get(), fy.get());
  table.narrow[t](y, fy.get(), nullptr, nullptr, ny);
}

}  // namespace

void run_conv(const Node& node, const void* x, const void* k, void* y) {
  if (node.spec.size() == 0) return;
  const ConvGeometry g = conv_geometry(node);
  if (g.group_in == 0) {  // nothing to sum over
    std::memset(y, 0, static_cast<size_t>(node.spec.bytes()));
    return;
  }
  switch (node.spec.dtype) {
    case DType::F32:
      return conv_f32(g, static_cast<const float*>(x), static_cast<const float*>(k), static_cast<float*>(y));
    case DType::F64:
      return conv_im2col(g, static_cast<const double*>(x), static_cast<const double*>(k),
                         static_cast<double*>(y));
    case DType::C64:
      return conv_im2col(g, static_cast<const complex64*>(x), static_cast<const complex64*>(k),
                         static_cast<complex64*>(y));
    case DType::C128:
      return conv_im2col(g, static_cast<const complex128*>(x), static_cast<const complex128*>(k),
                         static_cast<complex128*>(y));
    case DType::F16:
    case DType::BF16: return conv_half(g, node, x, k, y);
    default:
      // The builder computes conv in a floating type (Nx.Type.to_floating).
      throw DeviceError(error_message(
          "host", "conv of " + std::string(dtype_name(node.spec.dtype)) + " has no kernel", "", ""));
  }
}

}  // namespace sluice::cpu
