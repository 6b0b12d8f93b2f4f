// The row kernels of the host's native blocks (native_blocks.cpp), compiled
// once per ISA like the elementwise kernels, so that their loops are as wide
// as the CPU allows.
//
// softmax of a row: its maximum (and whether it holds a NaN) in one pass,
// then, a chunk at a time while it is in cache, the shifted row through
// this table's exp (the fallback's exp), then the sum in as many lanes as a
// vector holds, then the division by it. NaN in the row: a row of NaNs, as
// the fallback's reduce_max and exp give.

#include <cmath>
#include <limits>

#include <sluice/devices/cpu/kernels/simd_vec.h>

namespace sluice::cpu::SLUICE_ISA {
namespace {

constexpr int64_t kChunk = 1024;

template <typename T>
void softmax_rows(void* out, const void* in, int64_t rows, int64_t n) {
  const Kernel exp = kernel_table().op[static_cast<int>(Op::Exp)][static_cast<int>(dtype_of<T>())];
  constexpr int kLanes = static_cast<int>(64 / sizeof(T));  // a cache line: a vector's worth or more
  for (int64_t r = 0; r < rows; ++r) {
    const T* __restrict x = static_cast<const T*>(in) + r * n;
    T* __restrict o = static_cast<T*>(out) + r * n;
    T m = -std::numeric_limits<T>::infinity();
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
      m = x[i] > m ? x[i] : m;
      nan |= x[i] != x[i];
    }
    if (nan) {
      for (int64_t i = 0; i < n; ++i) o[i] = std::numeric_limits<T>::quiet_NaN();
      continue;
    }
    const T shift = std::isinf(m) ? T(0) : m;  // nn.h's shift: 0 where the maximum is not finite
    alignas(64) T shifted[kChunk];
    for (int64_t j = 0; j < n; j += kChunk) {
      const int64_t c = n - j < kChunk ? n - j : kChunk;
      for (int64_t i = 0; i < c; ++i) shifted[i] = x[j + i] - shift;
      exp(o + j, shifted, nullptr, nullptr, c);
    }
    T lanes[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int k = 0; k < kLanes; ++k) lanes[k] += o[i + k];
    for (; i < n; ++i) lanes[0] += o[i];
    for (int width = kLanes / 2; width > 0; width /= 2)
      for (int k = 0; k < width; ++k) lanes[k] += lanes[k + width];
    const T sum = lanes[0];
    for (int64_t j = 0; j < n; ++j) o[j] = o[j] / sum;
  }
}

}  // namespace

void fill_block_kernels(KernelTable& t) {
  t.softmax[static_cast<int>(DType::F32)] = softmax_rows<float>;
  t.softmax[static_cast<int>(DType::F64)] = softmax_rows<double>;
}

}  // namespace sluice::cpu::SLUICE_ISA
