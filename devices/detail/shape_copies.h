#pragma once
// Shape ops as box copies, for every backend: each shape op is a few copies
// between strided views of its operands and its result. Broadcast reads with
// stride 0, reverse with negative strides, a slice starts inside its operand
// and steps by its strides, a transpose permutes the strides, pad fills
// around (or between) the copied elements from its value operand,
// concatenate copies each operand into its band. This file says where
// elements go; a backend moves them (the host: copy_box, cpu/kernels/
// shape_box.h; CUDA: one generated kernel per element size).
// Internal to the devices layer.

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include <sluice/ops/expr.h>
#include <sluice/ops/shape.h>

namespace sluice {

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
  int64_t count() const;
};

// Drops size-1 axes and merges neighbouring axes that are contiguous in both
// views, so most copies become a few long runs. False when the box is empty.
bool normalize_box(Box& box);

// Row-major strides of a shape, in elements, without allocating.
std::array<int64_t, kMaxRank> row_major_strides(const Shape& shape);

// One copy of a shape op: `box` from operand `source`, starting at its
// element `source_offset`, into the result at element `result_offset`.
struct BoxCopy {
  Box box;
  int source = 0;
  int64_t source_offset = 0;
  int64_t result_offset = 0;
  // The whole operand into the whole result, in the same layout: nothing to
  // do when the operand already is the result's memory.
  bool whole = false;
};

// Starts read at run time (slice and put_slice with dynamic starts: s64
// scalar operands first_operand, first_operand + 1, ... one per axis), each
// clamped to [0, max_start[k]] so that the window fits, as Nx clamps, and
// moving the last copy by start * stride[k] elements on the side that holds
// the window: the source for slice, the result for put_slice.
struct DynamicStarts {
  size_t first_operand = 0;
  int rank = 0;
  std::array<int64_t, kMaxRank> max_start{}, stride{};
  bool on_source = true;
};

// The copies that make a shape op's result, in order (later copies write
// over earlier ones), and its dynamic starts if any.
struct ShapeCopies {
  std::vector<BoxCopy> copies;
  std::optional<DynamicStarts> dynamic;
};

// For a node of a shape op (reshape, broadcast, transpose, pad, reverse,
// slice, put_slice, concatenate). Empty results copy nothing.
ShapeCopies shape_copies(const Node& node);

}  // namespace sluice
