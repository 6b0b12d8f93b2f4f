#pragma once
// How dot's operands lie in memory, for every backend. A dot is a batched
// matrix product C[batch][m][n] = sum_k A[batch][m][k] * B[batch][k][n];
// each operand is either already a stack of matrices in one of the two
// orientations (a BLAS call takes it as it is, transposed or not), or is
// permuted into [batch][m][k] (a) and [batch][k][n] (b) first, by the box
// copy a_permutation() / b_permutation() describe.
// Internal to the devices layer.

#include <cstdint>
#include <vector>

#include <sluice/devices/detail/shape_copies.h>
#include <sluice/ops/expr.h>

namespace sluice {

struct DotShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

// An operand's axes after its (leading) batch axes: free axes then
// contracting axes, contracting then free, or neither (size-1 axes ignored).
enum class DotLayout : uint8_t { FreeFirst, ContractFirst, Other };

struct DotOperands {
  DotShape shape;
  DotLayout a_layout = DotLayout::Other, b_layout = DotLayout::Other;
  Spec a_spec, b_spec;
  std::vector<int64_t> a_order, b_order;  // a: batch, free, contract; b: batch, contract, free

  // The copies of a into [batch][m][k] and of b into [batch][k][n], row-major.
  Box a_permutation() const;
  Box b_permutation() const;
};

DotOperands make_dot_operands(const Node& node);

}  // namespace sluice
