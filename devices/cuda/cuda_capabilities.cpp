#include <sluice/devices/cuda/cuda_capabilities.h>

#include <fmt/format.h>

#include <limits>

#include <sluice/devices/detail/conv_geometry.h>
#include <sluice/devices/detail/dot_layout.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::cuda {

Capabilities cuda_capabilities() {
  Capabilities caps;
  for (int i = 0; i < kOpCount; ++i) caps.ops.push_back(static_cast<Op>(i));
  for (int t = 0; t < kDTypeCount; ++t) caps.dtypes.push_back(static_cast<DType>(t));
  return caps;
}

std::optional<std::string> cuda_declines(const Node& node) {
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (node.op == Op::Dot && !is_integer(node.spec.dtype)) {
    const DotShape d = make_dot_operands(node).shape;
    if (d.m > kIntMax || d.n > kIntMax || d.k > kIntMax || d.batch > kIntMax)
      return fmt::format("cuBLAS takes matrices of at most 2^31 - 1 rows and columns, found {}x{}x{}", d.m, d.n, d.k);
  }
  if (node.op == Op::Conv) {
    const ConvGeometry g = conv_geometry(node);
    if (g.output_size > kIntMax || g.group_in * g.kernel_size > kIntMax || g.group_out > kIntMax)
      return fmt::format("cuBLAS takes matrices of at most 2^31 - 1 rows and columns, found conv's {}x{}x{}",
                         g.group_out, g.output_size, g.group_in * g.kernel_size);
    if (g.groups * g.group_in * g.kernel_size * g.output_size > kIntMax)
      return fmt::format("the column matrices of one batch element take at most 2^31 - 1 elements, found {}",
                         g.groups * g.group_in * g.kernel_size * g.output_size);
  }
  if (op_family(node.op) == OpFamily::LinAlg) {
    const Shape& a = node.operands[0]->spec.shape;
    if (a.dim(a.rank() - 1) > kIntMax || a.dim(a.rank() - 2) > kIntMax || node.spec.size() > kIntMax)
      return fmt::format("cuBLAS's trsm and cuSOLVER's orgqr take 32-bit sizes, found a matrix {}", a);
  }
  if (node.op == Op::Fft || node.op == Op::Ifft) {
    const Shape& x = node.operands[0]->spec.shape;
    const int64_t n = x.dim(x.rank() - 1);
    if (n > kIntMax || (n > 0 && x.size() / n > kIntMax))
      return fmt::format("cuFFT takes at most 2^31 - 1 rows of at most 2^31 - 1 elements, found {}", x);
  }
  return std::nullopt;
}

}  // namespace sluice::cuda
