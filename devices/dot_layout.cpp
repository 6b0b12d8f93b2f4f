#include <sluice/devices/detail/dot_layout.h>

#include <algorithm>

namespace sluice {
namespace {

bool contains(const std::vector<int64_t>& axes, int64_t axis) {
  return std::find(axes.begin(), axes.end(), axis) != axes.end();
}

// Axes of `shape` in neither list, in order.
std::vector<int64_t> free_axes(const Shape& shape, const std::vector<int64_t>& contract,
                               const std::vector<int64_t>& batch) {
  std::vector<int64_t> free;
  for (int64_t k = 0; k < shape.rank(); ++k) {
    if (!contains(contract, k) && !contains(batch, k)) free.push_back(k);
  }
  return free;
}

int64_t product(const Shape& shape, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t k : axes) n *= shape.dim(static_cast<int>(k));
  return n;
}

// Whether walking `order` visits the axes of `shape` in memory order; axes
// of size 1 occupy no memory and may stand anywhere.
bool in_memory_order(const Shape& shape, std::vector<int64_t> order) {
  std::erase_if(order, [&](int64_t k) { return shape.dim(static_cast<int>(k)) == 1; });
  return std::is_sorted(order.begin(), order.end());
}

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t>& b, const std::vector<int64_t>& c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

Box permutation(const Spec& spec, const std::vector<int64_t>& order) {
  const auto in_strides = row_major_strides(spec.shape);
  Box box;
  int64_t stride = 1;
  std::vector<int64_t> out_strides(order.size());
  for (size_t k = order.size(); k-- > 0;) {
    out_strides[k] = stride;
    stride *= spec.shape.dim(static_cast<int>(order[k]));
  }
  for (size_t k = 0; k < order.size(); ++k) {
    const int axis = static_cast<int>(order[k]);
    box.push(spec.shape.dim(axis), out_strides[k], in_strides[static_cast<size_t>(axis)]);
  }
  return box;
}

}  // namespace

DotOperands make_dot_operands(const Node& node) {
  const Attrs& at = node.attrs;
  DotOperands ops;
  ops.a_spec = node.operands[0]->spec;
  ops.b_spec = node.operands[1]->spec;
  const Shape& sa = ops.a_spec.shape;
  const Shape& sb = ops.b_spec.shape;
  const std::vector<int64_t> free_a = free_axes(sa, at.contract_a, at.batch_a);
  const std::vector<int64_t> free_b = free_axes(sb, at.contract_b, at.batch_b);
  ops.shape = {product(sa, at.batch_a), product(sa, free_a), product(sb, free_b), product(sa, at.contract_a)};
  ops.a_order = concat(at.batch_a, free_a, at.contract_a);
  ops.b_order = concat(at.batch_b, at.contract_b, free_b);
  // Plain (untransposed) orientations are preferred when both fit.
  if (in_memory_order(sa, ops.a_order)) {
    ops.a_layout = DotLayout::FreeFirst;
  } else if (in_memory_order(sa, concat(at.batch_a, at.contract_a, free_a))) {
    ops.a_layout = DotLayout::ContractFirst;
  }
  if (in_memory_order(sb, ops.b_order)) {
    ops.b_layout = DotLayout::ContractFirst;
  } else if (in_memory_order(sb, concat(at.batch_b, free_b, at.contract_b))) {
    ops.b_layout = DotLayout::FreeFirst;
  }
  return ops;
}

Box DotOperands::a_permutation() const { return permutation(a_spec, a_order); }
Box DotOperands::b_permutation() const { return permutation(b_spec, b_order); }

}  // namespace sluice
