#include <algorithm>
#include <string>

#include <sluice/devices/cpu/kernels/reduce_internal.h>
#include <sluice/base/error.h>

namespace sluice::cpu {

int64_t Groups::count() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t Groups::offset(int64_t i) const {
  if (dims.empty()) return 0;
  if (dims.size() == 1) return i * strides[0];
  int64_t off = 0;
  for (size_t k = dims.size(); k-- > 0;) {
    off += (i % dims[k]) * strides[k];
    i /= dims[k];
  }
  return off;
}

ReducePlan make_reduce_plan(const Shape& shape, const std::vector<int64_t>& axes) {
  struct Group {
    int64_t size;
    bool reduced;
  };
  std::vector<Group> groups;
  for (int axis = 0; axis < shape.rank(); ++axis) {
    const int64_t d = shape.dim(axis);
    if (d == 1) continue;
    const bool reduced = std::find(axes.begin(), axes.end(), axis) != axes.end();
    if (!groups.empty() && groups.back().reduced == reduced) {
      groups.back().size *= d;
    } else {
      groups.push_back({d, reduced});
    }
  }
  ReducePlan plan;
  if (groups.empty()) return plan;
  std::vector<int64_t> strides(groups.size());
  int64_t stride = 1;
  for (size_t k = groups.size(); k-- > 0;) {
    strides[k] = stride;
    stride *= groups[k].size;
  }
  size_t outer = groups.size() - 1;
  plan.inner = groups.back().size;
  plan.inner_reduced = groups.back().reduced;
  if (!plan.inner_reduced && outer > 0) plan.adjacent = groups[--outer].size;
  for (size_t k = 0; k + 1 < groups.size(); ++k) {
    if (groups[k].reduced) plan.outer_reduced.push_back(static_cast<int64_t>(k));
    plan.outer_dims.push_back(groups[k].size);
  }
  for (size_t k = 0; k < outer; ++k) {
    Groups& g = groups[k].reduced ? plan.reduced : plan.kept;
    g.dims.push_back(groups[k].size);
    g.strides.push_back(strides[k]);
  }
  return plan;
}

void throw_not_real(const Node& node) {
  throw TypeError(error_message(op_name(node.op), "argument tensor", "a real dtype",
                                dtype_name(node.operands[0]->spec.dtype)));
}

}  // namespace sluice::cpu
