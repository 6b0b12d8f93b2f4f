#pragma once
// dot on the host: the shared layout of its operands (devices/detail/dot_layout.h),
// the permutations it names done by copy_box, and the integer loops.

#include <sluice/devices/detail/dot_layout.h>

namespace sluice::cpu {

// Copies a into [batch][m][k] and b into [batch][k][n] row-major.
void permute_a(const DotOperands& ops, const void* a, void* out);
void permute_b(const DotOperands& ops, const void* b, void* out);

// Dot of integers, wrapping in their type.
void dot_integers(const DotOperands& ops, const void* a, const void* b, void* out);

}  // namespace sluice::cpu
