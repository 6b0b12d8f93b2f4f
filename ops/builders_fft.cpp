// fft and ifft along the last axis. The Fft node always transforms the whole
// last axis: a requested length pads it with zeros or slices it first.
// ifft is normalised by 1/n (as Nx and numpy), fft is not.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {
namespace {

Expr transform(Op op, Expr x, std::optional<int64_t> length) {
  detail::require(x, op_name(op), "x");
  x = detail::strengthen(x);
  const int64_t last = x.rank() > 0 ? x.shape()[x.rank() - 1] : 0;
  const int64_t n = length.value_or(last);
  const DType t = infer::fft_type(op_name(op), x.spec(), n);
  x = detail::convert(x, t);
  if (n < last) {
    std::vector<int64_t> lengths = x.shape().dims();
    lengths.back() = n;
    x = slice(x, std::vector<int64_t>(lengths.size(), 0), lengths);
  } else if (n > last) {
    std::vector<PadDim> config(static_cast<size_t>(x.rank()));
    config.back().high = n - last;
    x = pad(x, constant(0.0, t), config);
  }
  Attrs a;
  a.index = n;
  return detail::make(op, x.spec(), {x}, std::move(a));
}

}  // namespace

Expr fft(Expr x, std::optional<int64_t> length) { return transform(Op::Fft, x, length); }
Expr ifft(Expr x, std::optional<int64_t> length) { return transform(Op::Ifft, x, length); }

}  // namespace sluice
