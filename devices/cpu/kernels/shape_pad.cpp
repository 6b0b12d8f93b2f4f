// pad: x's element i of an axis lands at low + i * (interior + 1); elements
// landing outside the result (negative low or high) are dropped; every other
// position holds the value operand (a scalar of x's dtype, copied as bytes).

#include <algorithm>

#include <sluice/devices/cpu/kernels/shape_box.h>
#include <sluice/devices/cpu/kernels/shape_ops.h>

namespace sluice::cpu {
namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Along one axis: x's first kept element, how many are kept, and where the
// first lands in the result.
struct Kept {
  int64_t first = 0, count = 0, at = 0;
};

Kept kept(const PadDim& pad, int64_t x_dim, int64_t dim) {
  const int64_t step = pad.interior + 1;
  const int64_t first = pad.low >= 0 ? 0 : (-pad.low + step - 1) / step;
  const int64_t last = std::min(x_dim - 1, floor_div(dim - 1 - pad.low, step));
  const int64_t count = std::max<int64_t>(0, last - first + 1);
  return {first, count, count > 0 ? pad.low + first * step : dim};
}

}  // namespace

void run_pad(const Node& node, std::span<const void* const> in, void* out) {
  const Spec& x = node.operands[0]->spec;
  const Shape& shape = node.spec.shape;
  if (shape.size() == 0) return;
  const int rank = shape.rank();
  const size_t size = elem_size(x);
  const auto out_strides = row_major_strides(shape);
  const auto x_strides = row_major_strides(x.shape);
  std::array<Kept, kMaxRank> keep{};
  bool gaps = false, block_empty = false;
  for (int j = 0; j < rank; ++j) {
    keep[j] = kept(node.attrs.padding[j], x.shape.dim(j), shape.dim(j));
    gaps = gaps || (node.attrs.padding[j].interior > 0 && keep[j].count > 1);
    block_empty = block_empty || keep[j].count == 0;
  }

  // The value goes everywhere x does not: all of the result when interior
  // padding leaves gaps, else only the slabs around x's block. Slab k spans
  // x's block on axes before k, one side of it on axis k, all of later axes.
  auto fill = [&](const std::array<int64_t, kMaxRank>& begin, const std::array<int64_t, kMaxRank>& end) {
    Box box;
    int64_t first = 0;
    for (int j = 0; j < rank; ++j) {
      if (end[j] <= begin[j]) return;
      box.push(end[j] - begin[j], out_strides[j], 0);
      first += begin[j] * out_strides[j];
    }
    copy_box(size, in[1], element(out, first, node.spec), box);
  };
  std::array<int64_t, kMaxRank> begin{}, end{};
  for (int j = 0; j < rank; ++j) end[j] = shape.dim(j);
  if (gaps) {
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

  if (block_empty) return;
  Box box;
  int64_t from = 0, to = 0;
  for (int j = 0; j < rank; ++j) {
    box.push(keep[j].count, out_strides[j] * (node.attrs.padding[j].interior + 1), x_strides[j]);
    from += keep[j].first * x_strides[j];
    to += keep[j].at * out_strides[j];
  }
  copy_box(size, element(in[0], from, x), element(out, to, node.spec), box);
}

}  // namespace sluice::cpu
