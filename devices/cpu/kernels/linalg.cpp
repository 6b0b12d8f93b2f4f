// The linear algebra kernels' entry: one switch to one function per op.
#include <sluice/devices/cpu/kernels/kernels.h>
#include <sluice/devices/cpu/kernels/linalg_internal.h>
#include <sluice/base/error.h>

namespace sluice::cpu {

void run_linalg(const Node& node, std::span<const void* const> in, std::span<void* const> out) {
  switch (node.op) {
    case Op::Cholesky: return linalg::cholesky(node, in, out);
    case Op::TriangularSolve: return linalg::triangular_solve(node, in, out);
    case Op::Solve: return linalg::solve(node, in, out);
    case Op::Qr: return linalg::qr(node, in, out);
    case Op::Lu: return linalg::lu(node, in, out);
    case Op::Eigh: return linalg::eigh(node, in, out);
    default:
      throw InternalError(error_message(
          "host: run_linalg", std::string(op_name(node.op)) + " is not a linear algebra op", "", ""));
  }
}

}  // namespace sluice::cpu
