// Reverse-mode rule of conv (JAX's _conv_general_dilated_transpose_lhs and
// _rhs, in conv's fixed [batch][channels][spatial...] layout): both
// cotangents are convolutions themselves, so they run on the same kernel.
// - input: ct convolved with the kernel, its in and out channels swapped
//   (per group) and its window reversed; the forward strides become input
//   dilation and the input dilation strides; the padding puts every
//   product of the forward pass back under its input element.
// - kernel: the input convolved with ct, batch and channels of both swapped
//   (the batch is what is summed over); the forward strides become kernel
//   dilation and the kernel dilation strides. Feature groups become batch
//   groups there and batch groups feature groups.
#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/ops.h>

namespace sluice::grad_rules {
namespace {

Expr operand(const NodePtr& n, size_t i) { return Expr(n->operands[i]); }
Expr zeros(const Spec& spec) { return broadcast(constant(0.0, spec.dtype), spec.shape); }

// A size after inserting `dilation - 1` zeros between elements.
int64_t dilated(int64_t size, int64_t dilation) { return size == 0 ? 0 : (size - 1) * dilation + 1; }

// Swaps axes 0 and 1 of a rank-`rank` tensor.
Axes swap_leading(int rank) {
  Axes perm{1, 0};
  for (int64_t i = 2; i < rank; ++i) perm.push_back(i);
  return perm;
}

// dims with the leading `count` replaced by `leading`.
Shape replace_leading(const Shape& s, std::vector<int64_t> leading, int count) {
  for (int i = count; i < s.rank(); ++i) leading.push_back(s[i]);
  return Shape(std::move(leading));
}

struct Geometry {
  std::vector<int64_t> input, kernel,
      output;  // spatial dims, dilated (by input dilation, kernel dilation, strides)
};

Geometry geometry(const NodePtr& n) {
  const Attrs& a = n->attrs;
  Geometry g;
  for (int i = 2; i < n->spec.shape.rank(); ++i) {
    const size_t k = static_cast<size_t>(i - 2);
    g.input.push_back(dilated(n->operands[0]->spec.shape[i], a.padding[k].interior + 1));
    g.kernel.push_back(dilated(n->operands[1]->spec.shape[i], a.dilations[k]));
    g.output.push_back(dilated(n->spec.shape[i], a.strides[k]));
  }
  return g;
}

Expr input_cotangent(const NodePtr& n, const Expr& ct, const Geometry& g) {
  const Attrs& a = n->attrs;
  const Expr x = operand(n, 0), k = operand(n, 1);
  const int rank = x.rank();
  const int64_t groups = std::max(a.feature_groups, a.batch_groups);
  const int64_t out_channels = k.shape()[0], group_in = k.shape()[1];
  // kernel [groups * out/groups][in/groups][K...] -> [groups * in/groups][out/groups][K...]
  Axes to_group_first{0, 2, 1};
  for (int64_t i = 3; i <= rank; ++i) to_group_first.push_back(i);
  Expr flipped = reshape(k, replace_leading(k.shape(), {groups, out_channels / groups, group_in}, 2));
  flipped = reshape(transpose(flipped, to_group_first),
                    replace_leading(k.shape(), {groups * group_in, out_channels / groups}, 2));
  Axes spatial;
  for (int64_t i = 2; i < rank; ++i) spatial.push_back(i);
  if (!spatial.empty()) flipped = reverse(flipped, spatial);  // reverse({}) would reverse every axis

  ConvOptions o{.padding = ConvPadding::Explicit, .feature_group_size = groups};
  for (size_t i = 0; i < g.input.size(); ++i) {
    const int64_t low = g.kernel[i] - a.padding[i].low - 1;
    o.padding_config.push_back(
        {.low = low, .high = g.input[i] + g.kernel[i] - 1 - g.output[i] - low, .interior = 0});
    o.strides.push_back(a.padding[i].interior + 1);
    o.input_dilation.push_back(a.strides[i]);
  }
  o.kernel_dilation = a.dilations;
  Expr dx = conv(ct, flipped, o);  // [batch / batch groups][batch groups * channels][S...]
  if (a.batch_groups > 1) {
    // Channel block j belongs to batch group j: move it in front of the batch.
    const int64_t out_batch = ct.shape()[0], channels = x.shape()[1];
    Axes block_first{1, 0};
    for (int64_t i = 2; i <= rank; ++i) block_first.push_back(i);
    dx = reshape(dx, replace_leading(x.shape(), {out_batch, a.batch_groups, channels}, 2));
    dx = reshape(transpose(dx, block_first), x.shape());
  }
  return dx;
}

Expr kernel_cotangent(const NodePtr& n, const Expr& ct, const Geometry& g) {
  const Attrs& a = n->attrs;
  const Expr x = operand(n, 0);
  const int rank = x.rank();
  ConvOptions o{.padding = ConvPadding::Explicit,
                .feature_group_size = a.batch_groups,
                .batch_group_size = a.feature_groups};
  for (size_t i = 0; i < g.input.size(); ++i) {
    const int64_t low = a.padding[i].low;
    o.padding_config.push_back(
        {.low = low, .high = g.output[i] - g.input[i] + g.kernel[i] - low - 1, .interior = 0});
    o.input_dilation.push_back(a.padding[i].interior + 1);
  }
  o.strides = a.dilations;
  o.kernel_dilation = a.strides;
  const Axes swap = swap_leading(rank);
  return transpose(conv(transpose(x, swap), transpose(ct, swap), o), swap);
}

}  // namespace

std::vector<Expr> grad_conv(const NodePtr& n, const Expr& ct) {
  const Spec& x = n->operands[0]->spec;
  const Spec& k = n->operands[1]->spec;
  // With nothing to sum over (an empty result, input or kernel), the
  // transposed convolutions would be degenerate: every cotangent is zero.
  if (n->spec.size() == 0 || x.size() == 0 || k.size() == 0) return {zeros(x), zeros(k)};
  const Geometry g = geometry(n);
  return {input_cotangent(n, ct, g), kernel_cotangent(n, ct, g)};
}

}  // namespace sluice::grad_rules
