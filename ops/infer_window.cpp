// Shapes of windowed reductions.
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {

void window_options(std::string_view op, const Shape& x, const std::vector<int64_t>& window,
                    std::vector<int64_t>& strides, std::vector<PadDim>& padding) {
  const size_t rank = static_cast<size_t>(x.rank());
  if (window.size() != rank)
    shape_error(op, "window", cat(rank, " dims (one per axis of ", x.str(), ")"), str(window));
  if (strides.empty()) strides.assign(rank, 1);
  if (padding.empty()) padding.assign(rank, PadDim{});
  if (strides.size() != rank) shape_error(op, "strides", cat(rank, " entries (one per axis)"), str(strides));
  if (padding.size() != rank)
    shape_error(op, "padding", cat(rank, " entries (one per axis)"), cat(padding.size()));
  for (size_t i = 0; i < rank; ++i) {
    if (window[i] < 1) shape_error(op, "window", cat("dims >= 1 (axis ", i, ")"), str(window));
    if (strides[i] < 1) shape_error(op, "strides", cat("strides >= 1 (axis ", i, ")"), str(strides));
    const PadDim& p = padding[i];
    if (p.low < 0 || p.high < 0 || p.interior != 0) {
      shape_error(op, "padding", cat("low >= 0, high >= 0 and no interior padding (axis ", i, ")"),
                  cat("low ", p.low, ", high ", p.high, ", interior ", p.interior));
    }
  }
}

Shape window(std::string_view op, const Shape& x, const std::vector<int64_t>& window,
             const std::vector<int64_t>& strides, const std::vector<PadDim>& padding) {
  std::vector<int64_t> dims;
  for (int i = 0; i < x.rank(); ++i) {
    const size_t k = static_cast<size_t>(i);
    const int64_t padded = x[i] + padding[k].low + padding[k].high;
    if (window[k] > padded) {
      shape_error(op, "window", cat("dims <= the padded dims (axis ", i, ": ", padded, ")"), str(window));
    }
    dims.push_back((padded - window[k]) / strides[k] + 1);
  }
  return Shape(std::move(dims));
}

DType window_type(Op op, DType x) {
  if (op == Op::WindowMax || op == Op::WindowMin || op == Op::CumulativeMax || op == Op::CumulativeMin) {
    if (is_complex(x))
      type_error(op_name(op), "x", "a real dtype (complex numbers have no order)", dtype_name(x));
    return x;
  }
  return x == DType::Pred ? DType::U8 : x;
}

}  // namespace sluice::infer
