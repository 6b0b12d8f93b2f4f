#pragma once
// Conv on the CPU, shared by its two paths (conv.cpp dispatches):
// - conv_dnnl.cpp: oneDNN's convolution for f32 (and f16/bf16 widened to it)
//   with 1 to 3 spatial axes, no input dilation, no batch groups and no
//   negative padding; measured 1.6-2x faster than im2col into OpenBLAS on
//   the benchmark's 3x3, 64-channel layer (bench/conv.cpp).
// - conv_im2col.cpp: every case, every floating dtype: each window is
//   copied into a column matrix and multiplied by the kernel with gemm.
// Private to the CPU backend.

#include <cstdint>
#include <vector>

#include <sluice/ops/expr.h>

namespace sluice::cpu {

// A conv node's sizes, read from its specs and attrs. Spatial lists have one
// entry per spatial axis; the *_size products are 1 with no spatial axes.
struct ConvGeometry {
  int64_t in_batch = 0, out_batch = 0;      // out_batch = in_batch / batch_groups
  int64_t channels = 0, group_in = 0;       // input channels; per feature group (kernel dim 1)
  int64_t out_channels = 0, group_out = 0;  // per group (feature or batch)
  int64_t groups = 1;                       // feature_groups * batch_groups (one of them is 1)
  int64_t feature_groups = 1, batch_groups = 1;
  std::vector<int64_t> input, kernel, output;  // spatial dims
  std::vector<int64_t> strides, low, high, input_dilation, kernel_dilation;
  int64_t input_size = 1, kernel_size = 1, output_size = 1;

  int spatial() const { return static_cast<int>(input.size()); }
};
ConvGeometry conv_geometry(const Node& node);

// Below this many multiply-adds a conv runs on the calling thread: waking a
// worker (~25 us) costs more than the arithmetic (dot.cpp's threshold).
inline constexpr int64_t kConvSerialMacs = int64_t{1} << 21;
int64_t conv_macs(const ConvGeometry& g);

// oneDNN, f32: false when oneDNN has no implementation for this geometry
// (the caller then runs im2col); otherwise y is written.
bool conv_dnnl(const ConvGeometry& g, const float* x, const float* k, float* y);

// im2col + gemm for T in float, double, complex64, complex128.
template <typename T>
void conv_im2col(const ConvGeometry& g, const T* x, const T* k, T* y);

}  // namespace sluice::cpu
