#pragma once
// What the reduction kernels (reduce.cpp, reduce_arg.cpp) share: the input
// seen as groups of axes, and the entry of the arg reductions.

#include <cstdint>
#include <vector>

#include <sluice/ops/expr.h>

namespace sluice::cpu {

// Axes with their strides in elements, outermost first.
struct Groups {
  std::vector<int64_t> dims, strides;
  int64_t count() const;
  // Offset in elements of the i-th combination of indices, row-major.
  int64_t offset(int64_t i) const;
};

// A non-empty input whose adjacent axes of one kind (kept or reduced) are
// merged and whose size-1 axes are dropped, e.g. f32[8][1][4][5] over axes
// {2, 3} is a kept group of 8 then a reduced group of 20: the innermost group
// is reduced, inner = 20, kept = {[8], [20]}, reduced = {} .
struct ReducePlan {
  Groups kept;               // kept groups (all of them when inner_reduced)
  Groups reduced;            // reduced groups, except `inner` and `adjacent`
  int64_t inner = 1;         // elements of the innermost group (stride 1)
  bool inner_reduced = true;
  int64_t adjacent = 1;      // kept inner group: rows of the reduced group just outside it
  // Every group but the innermost, outermost first, and which are reduced.
  std::vector<int64_t> outer_dims, outer_reduced;
};

ReducePlan make_reduce_plan(const Shape& shape, const std::vector<int64_t>& axes);

// Argmax and Argmin.
void run_reduce_arg(const Node& node, const void* in, void* out);

// TypeError for max/min-like reductions of complex tensors.
[[noreturn]] void throw_not_real(const Node& node);

}  // namespace sluice::cpu
