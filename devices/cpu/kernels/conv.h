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

#include <sluice/devices/detail/conv_geometry.h>
#include <sluice/ops/expr.h>

namespace sluice::cpu {

// Below this many multiply-adds a conv runs on the calling thread: waking a
// worker (~25 us) costs more than the arithmetic (dot.cpp's threshold).
inline constexpr int64_t kConvSerialMacs = int64_t{1} << 21;

// oneDNN, f32: false when oneDNN has no implementation for this geometry
// (the caller then runs im2col); otherwise y is written.
bool conv_dnnl(const ConvGeometry& g, const float* x, const float* k, float* y);

// im2col + gemm for T in float, double, complex64, complex128.
template <typename T>
void conv_im2col(const ConvGeometry& g, const T* x, const T* k, T* y);

}  // namespace sluice::cpu
