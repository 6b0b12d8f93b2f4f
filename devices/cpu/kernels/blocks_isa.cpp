// The row kernels of the host's native blocks (native_blocks.cpp), compiled
// once per ISA like the elementwise kernels, so that their loops are as wide
// as the CPU allows.
//
// softmax of a row: its maximum (and whether it holds a NaN) in one pass,
// then, while it is in cache, the shifted row through this table's exp (the
// fallback's exp), then the sum in as many lanes as a vector holds, then the
// division by it. NaN in the row: a row of NaNs, as the fallback's
// reduce_max and exp give.

#include <cmath>
#include <limits>

#include <sluice/devices/cpu/kernels/simd_vec.h>

namespace sluice::cpu::SLUICE_ISA {
namespace {

constexpr int64_t kChunk = 1024;

// The maximum of row[0..n) and whether it holds a NaN.
template <typename T>
bool row_max(const T* __restrict row, int64_t n, T& m) {
  m = -std::numeric_limits<T>::infinity();
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    m = row[i] > m ? row[i] : m;
    nan |= row[i] != row[i];
  }
  return nan;
}

// o[0..n), exponentials already, divided by their sum.
template <typename T>
void normalise(T* __restrict o, int64_t n) {
  constexpr int kLanes = static_cast<int>(64 / sizeof(T));  // a cache line: a vector's worth or more
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

// Rows are taken a group at a time, as many as fill a chunk (one row, in
// chunks, when it is longer): the group's shifted values go through exp in
// one call, so short rows cost no call each.
template <typename T>
void softmax_rows(void* out, const void* in, int64_t rows, int64_t n) {
  if (n == 0) return;
  const Kernel exp = kernel_table().op[static_cast<int>(Op::Exp)][static_cast<int>(dtype_of<T>())];
  const T* x = static_cast<const T*>(in);
  T* o = static_cast<T*>(out);
  constexpr T kNan = std::numeric_limits<T>::quiet_NaN();
  alignas(64) T shifted[kChunk];
  const int64_t per_group = n >= kChunk ? 1 : kChunk / n;
  bool nan[kChunk];
  for (int64_t r0 = 0; r0 < rows; r0 += per_group) {
    const int64_t group = rows - r0 < per_group ? rows - r0 : per_group;
    for (int64_t g = 0; g < group; ++g) {
      const T* row = x + (r0 + g) * n;
      T m;
      nan[g] = row_max(row, n, m);
      const T shift = std::isinf(m) ? T(0) : m;  // nn.h's shift: 0 where the maximum is not finite
      if (n >= kChunk) {                         // one long row, a chunk at a time while it is in cache
        T* to = o + (r0 + g) * n;
        for (int64_t j = 0; j < n; j += kChunk) {
          const int64_t c = n - j < kChunk ? n - j : kChunk;
          for (int64_t i = 0; i < c; ++i) shifted[i] = row[j + i] - shift;
          exp(to + j, shifted, nullptr, nullptr, c);
        }
      } else {
        for (int64_t i = 0; i < n; ++i) shifted[g * n + i] = row[i] - shift;
      }
    }
    if (n < kChunk) exp(o + r0 * n, shifted, nullptr, nullptr, group * n);
    for (int64_t g = 0; g < group; ++g) {
      T* to = o + (r0 + g) * n;
      if (nan[g]) {  // a NaN makes its row NaN, as the fallback's reduce_max and exp do
        for (int64_t i = 0; i < n; ++i) to[i] = kNan;
      } else {
        normalise(to, n);
      }
    }
  }
}

}  // namespace

void fill_block_kernels(KernelTable& t) {
  t.softmax[static_cast<int>(DType::F32)] = softmax_rows<float>;
  t.softmax[static_cast<int>(DType::F64)] = softmax_rows<double>;
}

}  // namespace sluice::cpu::SLUICE_ISA
