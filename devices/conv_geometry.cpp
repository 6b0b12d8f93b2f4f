#include <sluice/devices/detail/conv_geometry.h>

namespace sluice {

ConvGeometry conv_geometry(const Node& node) {
  const Shape& x = node.operands[0]->spec.shape;
  const Shape& k = node.operands[1]->spec.shape;
  const Attrs& a = node.attrs;
  ConvGeometry g;
  g.in_batch = x[0];
  g.out_batch = node.spec.shape[0];
  g.channels = x[1];
  g.group_in = k[1];
  g.out_channels = k[0];
  g.feature_groups = a.feature_groups;
  g.batch_groups = a.batch_groups;
  g.groups = a.feature_groups * a.batch_groups;
  g.group_out = g.out_channels / g.groups;
  for (int i = 2; i < x.rank(); ++i) {
    const size_t s = static_cast<size_t>(i - 2);
    g.input.push_back(x[i]);
    g.kernel.push_back(k[i]);
    g.output.push_back(node.spec.shape[i]);
    g.strides.push_back(a.strides[s]);
    g.low.push_back(a.padding[s].low);
    g.high.push_back(a.padding[s].high);
    g.input_dilation.push_back(a.padding[s].interior + 1);
    g.kernel_dilation.push_back(a.dilations[s]);
    g.input_size *= x[i];
    g.kernel_size *= k[i];
    g.output_size *= node.spec.shape[i];
  }
  return g;
}

int64_t conv_macs(const ConvGeometry& g) {
  return g.out_batch * g.out_channels * g.output_size * g.group_in * g.kernel_size;
}

}  // namespace sluice
