#include <sluice/devices/cpu/kernels/dot_layout.h>

#include <sluice/devices/cpu/kernels/shape_box.h>

namespace sluice::cpu {

void permute_a(const DotOperands& ops, const void* a, void* out) {
  copy_box(elem_size(ops.a_spec), a, out, ops.a_permutation());
}
void permute_b(const DotOperands& ops, const void* b, void* out) {
  copy_box(elem_size(ops.b_spec), b, out, ops.b_permutation());
}

}  // namespace sluice::cpu
