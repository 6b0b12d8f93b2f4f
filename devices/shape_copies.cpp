#include <sluice/devices/detail/shape_copies.h>

#include <algorithm>
#include <string>

#include <sluice/base/error.h>

namespace sluice {

int64_t Box::count() const {
  int64_t n = 1;
  for (int k = 0; k < rank; ++k) n *= dims[k];
  return n;
}

bool normalize_box(Box& box) {
  Box merged;
  for (int k = 0; k < box.rank; ++k) {
    const int64_t dim = box.dims[k];
    if (dim == 0) return false;
    if (dim == 1) continue;
    if (merged.rank > 0) {
      const int last = merged.rank - 1;
      if (merged.out_strides[last] == box.out_strides[k] * dim &&
          merged.in_strides[last] == box.in_strides[k] * dim) {
        merged.dims[last] *= dim;
        merged.out_strides[last] = box.out_strides[k];
        merged.in_strides[last] = box.in_strides[k];
        continue;
      }
    }
    merged.push(dim, box.out_strides[k], box.in_strides[k]);
  }
  box = merged;
  return true;
}

std::array<int64_t, kMaxRank> row_major_strides(const Shape& shape) {
  std::array<int64_t, kMaxRank> strides{};
  int64_t step = 1;
  for (int k = shape.rank(); k-- > 0;) {
    strides[k] = step;
    step *= shape.dim(k);
  }
  return strides;
}

namespace {

// Row-major order is unchanged: one contiguous copy.
ShapeCopies reshape(const Node& node) {
  BoxCopy c;
  c.box.push(node.spec.size(), 1, 1);
  c.whole = true;
  return {{c}, std::nullopt};
}

// Operand axis i becomes output axis attrs.axes[i]; output axes the operand
// lacks, and operand axes of size 1, repeat (input stride 0).
ShapeCopies broadcast(const Node& node) {
  const Shape& shape = node.spec.shape;
  const Shape& x = node.operands[0]->spec.shape;
  const auto out_strides = row_major_strides(shape);
  const auto x_strides = row_major_strides(x);
  BoxCopy c;
  for (int j = 0; j < shape.rank(); ++j) c.box.push(shape.dim(j), out_strides[j], 0);
  for (int i = 0; i < x.rank(); ++i)
    if (x.dim(i) != 1) c.box.in_strides[node.attrs.axes[i]] = x_strides[i];
  return {{c}, std::nullopt};
}

// Output axis j walks input axis attrs.axes[j].
ShapeCopies transpose(const Node& node) {
  const Shape& shape = node.spec.shape;
  const auto out_strides = row_major_strides(shape);
  const auto x_strides = row_major_strides(node.operands[0]->spec.shape);
  BoxCopy c;
  for (int j = 0; j < shape.rank(); ++j) c.box.push(shape.dim(j), out_strides[j], x_strides[node.attrs.axes[j]]);
  return {{c}, std::nullopt};
}

// Reversed axes are read from their last element backwards.
ShapeCopies reverse(const Node& node) {
  const Shape& shape = node.spec.shape;
  const auto strides = row_major_strides(shape);
  BoxCopy c;
  for (int j = 0; j < shape.rank(); ++j) c.box.push(shape.dim(j), strides[j], strides[j]);
  for (int64_t axis : node.attrs.axes) {
    c.source_offset += (shape.dim(static_cast<int>(axis)) - 1) * strides[axis];
    c.box.in_strides[axis] = -strides[axis];
  }
  return {{c}, std::nullopt};
}

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// pad: x's element i of an axis lands at low + i * (interior + 1); elements
// landing outside the result (negative low or high) are dropped; every
// other position holds the value operand (a scalar of x's dtype).
ShapeCopies pad(const Node& node) {
  const Spec& x = node.operands[0]->spec;
  const Shape& shape = node.spec.shape;
  const int rank = shape.rank();
  const auto out_strides = row_major_strides(shape);
  const auto x_strides = row_major_strides(x.shape);
  // Along one axis: x's first kept element, how many are kept, and where
  // the first lands in the result.
  struct Kept {
    int64_t first = 0, count = 0, at = 0;
  };
  std::array<Kept, kMaxRank> keep{};
  bool gaps = false, block_empty = false;
  for (int j = 0; j < rank; ++j) {
    const PadDim& p = node.attrs.padding[j];
    const int64_t step = p.interior + 1, dim = shape.dim(j);
    const int64_t first = p.low >= 0 ? 0 : (-p.low + step - 1) / step;
    const int64_t last = std::min(x.shape.dim(j) - 1, floor_div(dim - 1 - p.low, step));
    const int64_t count = std::max<int64_t>(0, last - first + 1);
    keep[j] = {first, count, count > 0 ? p.low + first * step : dim};
    gaps = gaps || (p.interior > 0 && keep[j].count > 1);
    block_empty = block_empty || keep[j].count == 0;
  }

  ShapeCopies out;
  // The value goes everywhere x does not: all of the result when interior
  // padding leaves gaps, else only the slabs around x's block. Slab k spans
  // x's block on axes before k, one side of it on axis k, all of later axes.
  auto fill = [&](const std::array<int64_t, kMaxRank>& begin, const std::array<int64_t, kMaxRank>& end) {
    BoxCopy c;
    c.source = 1;
    for (int j = 0; j < rank; ++j) {
      if (end[j] <= begin[j]) return;
      c.box.push(end[j] - begin[j], out_strides[j], 0);
      c.result_offset += begin[j] * out_strides[j];
    }
    out.copies.push_back(c);
  };
  std::array<int64_t, kMaxRank> begin{}, end{};
  for (int j = 0; j < rank; ++j) end[j] = shape.dim(j);
  if (gaps || block_empty) {
    fill(begin, end);
  } else {
    for (int k = 0; k < rank; ++k) {
      const int64_t block_begin = keep[k].at, block_end = keep[k].at + keep[k].count;
      end[k] = block_begin;
      fill(begin, end);
      begin[k] = block_end;
      end[k] = shape.dim(k);
      fill(begin, end);
      begin[k] = block_begin;
      end[k] = block_end;
    }
  }
  if (block_empty) return out;
  BoxCopy c;
  for (int j = 0; j < rank; ++j) {
    c.box.push(keep[j].count, out_strides[j] * (node.attrs.padding[j].interior + 1), x_strides[j]);
    c.source_offset += keep[j].first * x_strides[j];
    c.result_offset += keep[j].at * out_strides[j];
  }
  out.copies.push_back(c);
  return out;
}

// The starts of a window of `window` in x, clamped so the window fits:
// static ones now, dynamic ones (operands from `first`) at run time.
// Returns the static part of the offset.
int64_t window_starts(const Node& node, size_t first, const Shape& x, const std::vector<int64_t>& window,
                      bool on_source, ShapeCopies& out) {
  const auto x_strides = row_major_strides(x);
  if (node.attrs.starts.empty() && x.rank() > 0) {
    DynamicStarts d;
    d.first_operand = first;
    d.rank = x.rank();
    d.on_source = on_source;
    for (int j = 0; j < x.rank(); ++j) {
      d.max_start[j] = x.dim(j) - window[j];
      d.stride[j] = x_strides[j];
    }
    out.dynamic = d;
    return 0;
  }
  int64_t offset = 0;
  for (int j = 0; j < x.rank(); ++j)
    offset += std::clamp<int64_t>(node.attrs.starts[j], 0, x.dim(j) - window[j]) * x_strides[j];
  return offset;
}

// slice x [start : start + length : stride] per axis.
ShapeCopies slice(const Node& node) {
  const Spec& x = node.operands[0]->spec;
  const Shape& shape = node.spec.shape;
  ShapeCopies out;
  BoxCopy c;
  c.source_offset = window_starts(node, 1, x.shape, node.attrs.lengths, true, out);
  const auto x_strides = row_major_strides(x.shape);
  const auto out_strides = row_major_strides(shape);
  for (int j = 0; j < shape.rank(); ++j) {
    const int64_t stride = node.attrs.strides.empty() ? 1 : node.attrs.strides[j];
    c.box.push(shape.dim(j), out_strides[j], x_strides[j] * stride);
  }
  out.copies.push_back(c);
  return out;
}

// x, with update written over the window at the starts.
ShapeCopies put_slice(const Node& node) {
  const Spec& x = node.operands[0]->spec;
  const Spec& update = node.operands[1]->spec;
  ShapeCopies out;
  BoxCopy all;
  all.box.push(x.size(), 1, 1);
  all.whole = true;
  out.copies.push_back(all);
  BoxCopy c;
  c.source = 1;
  c.result_offset = window_starts(node, 2, x.shape, update.shape.dims(), false, out);
  const auto x_strides = row_major_strides(x.shape);
  const auto update_strides = row_major_strides(update.shape);
  for (int j = 0; j < x.shape.rank(); ++j) c.box.push(update.shape.dim(j), x_strides[j], update_strides[j]);
  out.copies.push_back(c);
  return out;
}

// Each operand is copied into its band of the result along attrs.axis.
ShapeCopies concatenate(const Node& node) {
  const Shape& shape = node.spec.shape;
  const int axis = static_cast<int>(node.attrs.axis);
  const auto out_strides = row_major_strides(shape);
  ShapeCopies out;
  int64_t offset = 0;
  for (size_t i = 0; i < node.operands.size(); ++i) {
    const Shape& x = node.operands[i]->spec.shape;
    const auto x_strides = row_major_strides(x);
    BoxCopy c;
    c.source = static_cast<int>(i);
    c.result_offset = offset * out_strides[axis];
    for (int j = 0; j < x.rank(); ++j) c.box.push(x.dim(j), out_strides[j], x_strides[j]);
    out.copies.push_back(c);
    offset += x.dim(axis);
  }
  return out;
}

}  // namespace

ShapeCopies shape_copies(const Node& node) {
  switch (node.op) {
    case Op::Reshape: return reshape(node);
    case Op::Broadcast: return broadcast(node);
    case Op::Transpose: return transpose(node);
    case Op::Pad: return pad(node);
    case Op::Reverse: return reverse(node);
    case Op::Slice: return slice(node);
    case Op::PutSlice: return put_slice(node);
    case Op::Concatenate: return concatenate(node);
    default: break;
  }
  throw InternalError(
      error_message("shape_copies", "",
                    "a shape op (reshape, broadcast, transpose, pad, reverse, slice, put_slice, concatenate)",
                    op_name(node.op)));
}

}  // namespace sluice
