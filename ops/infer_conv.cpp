// Shapes of convolutions (Nx.conv, XLA's ConvGeneralDilated).
#include <algorithm>

#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {
namespace {

// A size after inserting `dilation - 1` zeros between elements.
int64_t dilated(int64_t size, int64_t dilation) { return size == 0 ? 0 : (size - 1) * dilation + 1; }

}  // namespace

void conv_operands(std::string_view op, const Shape& input, const Shape& kernel) {
  if (input.rank() < 2) shape_error(op, "input", "rank >= 2 ([batch][channels][spatial...])", input.str());
  if (kernel.rank() != input.rank()) {
    shape_error(op, "kernel", cat("rank ", input.rank(), " (as input ", input.str(), ")"),
                cat(kernel.str(), " of rank ", kernel.rank()));
  }
}

std::vector<int64_t> conv_factors(std::string_view op, std::string_view arg, std::vector<int64_t> v,
                                  size_t spatial) {
  if (v.empty()) v.assign(spatial, 1);
  if (v.size() != spatial) shape_error(op, arg, cat(spatial, " entries (one per spatial axis)"), str(v));
  for (size_t i = 0; i < spatial; ++i) {
    if (v[i] < 1) shape_error(op, arg, cat("entries >= 1 (spatial axis ", i, ")"), str(v));
  }
  return v;
}

void conv_padding(std::string_view op, const std::vector<PadDim>& padding, size_t spatial) {
  if (padding.size() != spatial)
    shape_error(op, "padding_config", cat(spatial, " entries (one per spatial axis)"), cat(padding.size()));
  for (size_t i = 0; i < spatial; ++i) {
    if (padding[i].interior != 0) {
      shape_error(op, "padding_config", cat("interior 0 (spatial axis ", i, "; use input_dilation)"),
                  cat(padding[i].interior));
    }
  }
}

std::vector<PadDim> conv_same_padding(const Shape& kernel, const std::vector<int64_t>& kernel_dilation) {
  std::vector<PadDim> padding;
  for (int i = 2; i < kernel.rank(); ++i) {
    const int64_t total =
        std::max<int64_t>(dilated(kernel[i], kernel_dilation[static_cast<size_t>(i - 2)]) - 1, 0);
    padding.push_back({.low = total / 2, .high = total - total / 2, .interior = 0});
  }
  return padding;
}

void conv_groups(std::string_view op, const Shape& input, const Shape& kernel, int64_t feature_groups,
                 int64_t batch_groups) {
  if (feature_groups < 1) shape_error(op, "feature_group_size", ">= 1", cat(feature_groups));
  if (batch_groups < 1) shape_error(op, "batch_group_size", ">= 1", cat(batch_groups));
  if (feature_groups > 1 && batch_groups > 1) {
    shape_error(op, "batch_group_size",
                cat("1 when feature_group_size is ", feature_groups, " (at most one > 1)"),
                cat(batch_groups));
  }
  const int64_t batch = input[0], channels = input[1], out_channels = kernel[0];
  if (batch % batch_groups != 0) {
    shape_error(op, "batch_group_size",
                cat("a divisor of input's batch ", batch, " (input ", input.str(), ")"), cat(batch_groups));
  }
  if (channels % feature_groups != 0) {
    shape_error(op, "feature_group_size",
                cat("a divisor of input's channels ", channels, " (input ", input.str(), ")"),
                cat(feature_groups));
  }
  for (const int64_t groups : {feature_groups, batch_groups}) {
    if (out_channels % groups != 0) {
      shape_error(op, groups == feature_groups ? "feature_group_size" : "batch_group_size",
                  cat("a divisor of kernel's out channels ", out_channels, " (kernel ", kernel.str(), ")"),
                  cat(groups));
    }
  }
  if (kernel[1] * feature_groups != channels) {
    shape_error(op, "kernel",
                cat("in channels ", channels / feature_groups, " at axis 1 (input's ", channels,
                    " / feature_group_size ", feature_groups, ")"),
                cat(kernel.str()));
  }
}

Shape conv(std::string_view op, const Shape& input, const Shape& kernel, const Attrs& a) {
  std::vector<int64_t> dims{input[0] / a.batch_groups, kernel[0]};
  for (int i = 2; i < input.rank(); ++i) {
    const size_t k = static_cast<size_t>(i - 2);
    if (kernel[i] < 1) shape_error(op, "kernel", cat("spatial dims >= 1 (axis ", i, ")"), kernel.str());
    const PadDim& p = a.padding[k];
    const int64_t padded = dilated(input[i], p.interior + 1) + p.low + p.high;
    const int64_t window = dilated(kernel[i], a.dilations[k]);
    if (window > padded) {
      shape_error(op, "kernel",
                  cat("a dilated window within the padded, dilated input on axis ", i, " (", padded, ")"),
                  cat(window, " (kernel ", kernel.str(), ")"));
    }
    dims.push_back((padded - window) / a.strides[k] + 1);
  }
  return result_shape(op, std::move(dims));
}

}  // namespace sluice::infer
