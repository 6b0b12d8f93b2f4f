#pragma once
// The one engine behind every shape kernel on the host. Each shape op is a
// set of box copies between strided views of its buffers (devices/
// shape_copies.h says where elements go); copy_box moves them, per element
// size.

#include <array>
#include <cstddef>
#include <cstdint>

#include <sluice/devices/detail/shape_copies.h>
#include <sluice/ops/shape.h>

namespace sluice::cpu {

// Copies `box` from `in` to `out`, each pointing at the element of index 0.
// elem_size is 1, 2, 4, 8 or 16 bytes. Runs of elements contiguous in both
// views are memcpy'd; a box whose contiguous axes differ between the views
// (a transpose) is copied in cache-sized tiles; large boxes are split across
// cores. The views must not overlap.
void copy_box(size_t elem_size, const void* in, void* out, const Box& box);

inline size_t elem_size(const Spec& spec) { return static_cast<size_t>(dtype_size(spec.dtype)); }
// The address of element `index` (row-major) of a buffer of `spec`.
inline const void* element(const void* data, int64_t index, const Spec& spec) {
  return static_cast<const std::byte*>(data) + index * dtype_size(spec.dtype);
}
inline void* element(void* data, int64_t index, const Spec& spec) {
  return static_cast<std::byte*>(data) + index * dtype_size(spec.dtype);
}

}  // namespace sluice::cpu
