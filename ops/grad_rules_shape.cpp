// Reverse-mode rules of the ops that move elements: each cotangent moves
// the elements back (a slice's is a pad, a pad's a slice, a broadcast's a
// sum), as JAX's transpose rules do.
#include <sluice/ops/detail/grad_rules.h>
#include <sluice/ops/ops.h>

namespace sluice::grad_rules {
namespace {

Expr operand(const NodePtr& n, size_t i = 0) { return Expr(n->operands[i]); }
Expr zeros(const Spec& spec) { return broadcast(constant(0.0, spec.dtype), spec.shape); }

// The dynamic start operands of slice (from 1) or put_slice (from 2).
std::vector<Expr> starts_from(const NodePtr& n, size_t first) {
  std::vector<Expr> starts;
  for (size_t i = first; i < n->operands.size(); ++i) starts.push_back(Expr(n->operands[i]));
  return starts;
}

}  // namespace

std::vector<Expr> grad_reshape(const NodePtr& n, const Expr& ct) { return {reshape(ct, operand(n).shape())}; }

// Sums over the axes the broadcast added and those it stretched from 1;
// operand axes map to increasing result axes, so a reshape then drops the
// added ones.
std::vector<Expr> grad_broadcast(const NodePtr& n, const Expr& ct) {
  const Shape& x = operand(n).shape();
  const std::vector<int64_t>& axes = n->attrs.axes;
  std::vector<bool> kept(static_cast<size_t>(ct.rank()), false);
  for (size_t i = 0; i < axes.size(); ++i)
    kept[static_cast<size_t>(axes[i])] = x[static_cast<int>(i)] == ct.shape()[static_cast<int>(axes[i])];
  Axes summed;
  for (int64_t k = 0; k < ct.rank(); ++k)
    if (!kept[static_cast<size_t>(k)]) summed.push_back(k);
  Expr s = summed.empty() ? ct : sum(ct, {.axes = summed, .keep_axes = true});
  return {reshape(s, x)};
}

std::vector<Expr> grad_transpose(const NodePtr& n, const Expr& ct) {
  const std::vector<int64_t>& perm = n->attrs.axes;
  Axes inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return {transpose(ct, inverse)};
}

// Un-pads (a negative low or high restores trimmed elements as zeros), then
// steps over the interior padding; the padding value gets the rest.
std::vector<Expr> grad_pad(const NodePtr& n, const Expr& ct) {
  std::vector<PadDim> unpad;
  std::vector<int64_t> strides;
  for (const PadDim& p : n->attrs.padding) {
    unpad.push_back({.low = -p.low, .high = -p.high, .interior = 0});
    strides.push_back(p.interior + 1);
  }
  Expr unpadded = pad(ct, constant(0.0, ct.dtype()), unpad);
  Expr ct_x = slice(unpadded, std::vector<int64_t>(unpad.size(), 0), unpadded.shape().dims(), strides);
  return {ct_x, sum(ct) - sum(ct_x)};
}

std::vector<Expr> grad_reverse(const NodePtr& n, const Expr& ct) { return {reverse(ct, n->attrs.axes)}; }

// The cotangent spread back over the slice's extent: interior padding for
// strides, then (static) padding to x's shape or (dynamic) a put_slice at
// the same starts, which clamp as the slice's did since the extents match.
std::vector<Expr> grad_slice(const NodePtr& n, const Expr& ct) {
  const Spec& x = n->operands[0]->spec;
  if (ct.spec().size() == 0) return {zeros(x)};
  const bool dynamic = n->operands.size() > 1;
  std::vector<PadDim> spread;
  for (int k = 0; k < x.shape.rank(); ++k) {
    const auto i = static_cast<size_t>(k);
    const int64_t stride = n->attrs.strides[i], covered = (ct.shape()[k] - 1) * stride + 1;
    const int64_t start = dynamic ? 0 : n->attrs.starts[i];
    const int64_t end = dynamic ? n->attrs.lengths[i] : x.shape[k] - start;
    spread.push_back({.low = start, .high = end - covered, .interior = stride - 1});
  }
  Expr spread_ct = pad(ct, constant(0.0, ct.dtype()), spread);
  if (!dynamic) return {spread_ct};
  return {put_slice(zeros(x), starts_from(n, 1), spread_ct)};
}

std::vector<Expr> grad_put_slice(const NodePtr& n, const Expr& ct) {
  const Spec& update = n->operands[1]->spec;
  if (n->operands.size() > 2) {
    const std::vector<Expr> starts = starts_from(n, 2);
    return {put_slice(ct, starts, zeros(update)), slice(ct, starts, update.shape.dims())};
  }
  return {put_slice(ct, n->attrs.starts, zeros(update)), slice(ct, n->attrs.starts, update.shape.dims())};
}

std::vector<Expr> grad_concatenate(const NodePtr& n, const Expr& ct) {
  std::vector<Expr> cts;
  const auto axis = static_cast<size_t>(n->attrs.axis);
  std::vector<int64_t> starts(static_cast<size_t>(ct.rank()), 0);
  for (const NodePtr& part : n->operands) {
    cts.push_back(slice(ct, starts, part->spec.shape.dims()));
    starts[axis] += part->spec.shape.dims()[axis];
  }
  return cts;
}

}  // namespace sluice::grad_rules
