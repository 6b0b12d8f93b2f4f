#pragma once
// The one engine behind every shape kernel. Each shape op is a set of box
// copies between strided views of its buffers: broadcast reads with stride
// 0, reverse with negative strides, a slice starts inside its operand and
// steps by its strides, a transpose permutes the strides. The ops only say
// where elements go (shape_*.cpp); copy_box moves them, per element size.

#include <array>
#include <cstddef>
#include <cstdint>

#include <sluice/ops/shape.h>

namespace sluice::cpu {

// For every index i of `dims`: out[sum_k i_k * out_strides[k]] =
// in[sum_k i_k * in_strides[k]]. Strides count elements; input strides may
// be zero (repeat) or negative (walk backwards).
struct Box {
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{};
  std::array<int64_t, kMaxRank> out_strides{};
  std::array<int64_t, kMaxRank> in_strides{};

  void push(int64_t dim, int64_t out_stride, int64_t in_stride) {
    dims[rank] = dim;
    out_strides[rank] = out_stride;
    in_strides[rank] = in_stride;
    ++rank;
  }
};

// Copies `box` from `in` to `out`, each pointing at the element of index 0.
// elem_size is 1, 2, 4, 8 or 16 bytes. Runs of elements contiguous in both
// views are memcpy'd; a box whose contiguous axes differ between the views
// (a transpose) is copied in cache-sized tiles; large boxes are split across
// cores. The views must not overlap.
void copy_box(size_t elem_size, const void* in, void* out, const Box& box);

// Row-major strides of a shape, in elements, without allocating.
std::array<int64_t, kMaxRank> row_major_strides(const Shape& shape);

inline size_t elem_size(const Spec& spec) { return static_cast<size_t>(dtype_size(spec.dtype)); }
// The address of element `index` (row-major) of a buffer of `spec`.
inline const void* element(const void* data, int64_t index, const Spec& spec) {
  return static_cast<const std::byte*>(data) + index * dtype_size(spec.dtype);
}
inline void* element(void* data, int64_t index, const Spec& spec) {
  return static_cast<std::byte*>(data) + index * dtype_size(spec.dtype);
}

}  // namespace sluice::cpu
