#pragma once
// How dot's operands lie in memory, shared by the BLAS path (dot.cpp) and
// the integer loops (dot_int.cpp). A dot is a batched matrix product
// C[batch][m][n] = sum_k A[batch][m][k] * B[batch][k][n]; each operand is
// either already a stack of matrices in one of the two orientations, or is
// permuted into [batch][m][k] (a) and [batch][k][n] (b) first.

#include <cstdint>
#include <vector>

#include <sluice/ops/expr.h>

namespace sluice::cpu {

struct DotShape {
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

// An operand's axes after its (leading) batch axes: free axes then
// contracting axes, contracting then free, or neither (size-1 axes ignored).
enum class Layout : uint8_t { FreeFirst, ContractFirst, Other };

struct DotOperands {
  DotShape shape;
  Layout a_layout = Layout::Other, b_layout = Layout::Other;
  Spec a_spec, b_spec;
  std::vector<int64_t> a_order, b_order;  // a: batch, free, contract; b: batch, contract, free

  // Copies a into [batch][m][k] and b into [batch][k][n] row-major.
  void permute_a(const void* a, void* out) const;
  void permute_b(const void* b, void* out) const;
};

DotOperands make_dot_operands(const Node& node);

// Dot of integers, wrapping in their type.
void dot_integers(const DotOperands& ops, const void* a, const void* b, void* out);

}  // namespace sluice::cpu
