// conv: Nx.conv's options resolved into the node's attrs.
#include <sluice/ops/detail/builders_common.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/detail/shape_inference.h>

namespace sluice {

Expr conv(Expr input, Expr kernel, const ConvOptions& o) {
  detail::require(input, "conv", "input");
  detail::require(kernel, "conv", "kernel");
  input = detail::strengthen(input);
  kernel = detail::strengthen(kernel);
  infer::conv_operands("conv", input.shape(), kernel.shape());
  const size_t spatial = static_cast<size_t>(input.rank() - 2);
  Attrs a;
  a.strides = infer::conv_factors("conv", "strides", o.strides, spatial);
  a.dilations = infer::conv_factors("conv", "kernel_dilation", o.kernel_dilation, spatial);
  const std::vector<int64_t> input_dilation =
      infer::conv_factors("conv", "input_dilation", o.input_dilation, spatial);
  switch (o.padding) {
    case ConvPadding::Valid: a.padding.assign(spatial, PadDim{}); break;
    case ConvPadding::Same: a.padding = infer::conv_same_padding(kernel.shape(), a.dilations); break;
    case ConvPadding::Explicit:
      infer::conv_padding("conv", o.padding_config, spatial);
      a.padding = o.padding_config;
      break;
  }
  if (o.padding != ConvPadding::Explicit && !o.padding_config.empty()) {
    infer::shape_error("conv", "padding_config", "none unless padding is ConvPadding::Explicit",
                       infer::cat(o.padding_config.size(), " entries"));
  }
  for (size_t i = 0; i < spatial; ++i) a.padding[i].interior = input_dilation[i] - 1;
  infer::conv_groups("conv", input.shape(), kernel.shape(), o.feature_group_size, o.batch_group_size);
  a.feature_groups = o.feature_group_size;
  a.batch_groups = o.batch_group_size;
  Shape shape = infer::conv("conv", input.shape(), kernel.shape(), a);
  const DType t = to_floating(detail::merge_types({input, kernel}));
  return detail::make(Op::Conv, {t, std::move(shape)},
                      {detail::convert(input, t), detail::convert(kernel, t)}, std::move(a));
}

}  // namespace sluice
