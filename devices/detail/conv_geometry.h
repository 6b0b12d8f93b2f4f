#pragma once
// A conv node's sizes, read from its specs and attrs (Nx.conv, XLA's
// ConvGeneralDilated: ops/op_list.def), as every backend's conv reads them.
// Spatial lists have one entry per spatial axis; the *_size products are 1
// with no spatial axes.

#include <cstdint>
#include <vector>

#include <sluice/ops/expr.h>

namespace sluice {

struct ConvGeometry {
  int64_t in_batch = 0, out_batch = 0;      // out_batch = in_batch / batch_groups
  int64_t channels = 0, group_in = 0;       // input channels; per feature group (kernel dim 1)
  int64_t out_channels = 0, group_out = 0;  // per group (feature or batch)
  int64_t groups = 1;                       // feature_groups * batch_groups (one of them is 1)
  int64_t feature_groups = 1, batch_groups = 1;
  std::vector<int64_t> input, kernel, output;  // spatial dims
  std::vector<int64_t> strides, low, high, input_dilation, kernel_dilation;
  int64_t input_size = 1, kernel_size = 1, output_size = 1;

  int spatial() const { return static_cast<int>(input.size()); }
};
ConvGeometry conv_geometry(const Node& node);

// Multiply-adds of one conv.
int64_t conv_macs(const ConvGeometry& g);

}  // namespace sluice
