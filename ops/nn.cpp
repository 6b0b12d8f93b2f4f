// Model helpers as compositions of ops; see nn.h for the forms chosen.
#include <sluice/ops/nn.h>

#include <cmath>
#include <numbers>

#include <sluice/ops/detail/shape_inference.h>

namespace sluice {
namespace {

// The maximum to shift by before exponentials: a constant to grad (the
// shift cancels; JAX stops its gradient too), and 0 where it is not finite,
// so a slice of all -inf gives log(0) = -inf rather than NaN.
Expr shift_of(Expr x, const Axes& axes) {
  Expr m = stop_gradient(reduce_max(x, {.axes = axes, .keep_axes = true}));
  return select(is_infinity(m), constant(0.0, m.dtype()), m);
}

// max(x, 0) spelled (x + |x|) / 2 (exact in floating point): its gradient
// at 0 is 1/2, so softplus' is sigmoid(0) = 1/2 there, where relu's choice
// of 0 would make it 0 (and the gradient of a model whose logits start at
// 0, as zero-initialised weights make them, wrong).
Expr positive_part(Expr x) { return (x + abs(x)) * 0.5; }

}  // namespace

Expr logsumexp(Expr x, const ReduceOptions& o) {
  x = as_type(x, to_floating(x.dtype()));
  Expr m = shift_of(x, o.axes);
  Expr s = sum(exp(x - m), o);
  return log(s) + reshape(m, s.shape());
}

Expr log_softmax(Expr x, int64_t axis) {
  x = as_type(x, to_floating(x.dtype()));
  Expr shifted = x - shift_of(x, {axis});
  return shifted - log(sum(exp(shifted), {.axes = {axis}, .keep_axes = true}));
}

Expr softmax_as_ops(Expr x, int64_t axis) {
  x = as_type(x, to_floating(x.dtype()));
  Expr e = exp(x - shift_of(x, {axis}));
  return e / sum(e, {.axes = {axis}, .keep_axes = true});
}

Expr softmax(Expr x, int64_t axis) {
  x = as_type(x, to_floating(x.dtype()));
  // Along the last axis of f32 or f64, the block "softmax" (ops/block.h):
  // a backend's native kernel where it has one, these ops everywhere else.
  const bool last = x.rank() > 0 && infer::normalize_axis("softmax", "axis", x.rank(), axis) == x.rank() - 1;
  if (!last || (x.dtype() != DType::F32 && x.dtype() != DType::F64)) return softmax_as_ops(x, axis);
  const Function fallback = trace({x.spec()}, [](Expr v) { return softmax_as_ops(v, -1); });
  return block("softmax", fallback, {x})[0];
}

Expr one_hot(Expr indices, int64_t classes, DType dtype) {
  if (!is_integer(indices.dtype()))
    infer::type_error("one_hot", "indices", "an integer dtype", dtype_name(indices.dtype()));
  if (classes < 1) infer::shape_error("one_hot", "classes", "at least 1", infer::cat(classes));
  std::vector<int64_t> dims = indices.shape().dims();
  Axes kept;
  for (int64_t k = 0; k < indices.rank(); ++k) kept.push_back(k);
  dims.push_back(classes);
  const Spec spec{indices.dtype(), Shape(dims)};
  return as_type(broadcast(indices, spec.shape, kept) == iota(spec, indices.rank()), dtype);
}

Expr mean(Expr x, const ReduceOptions& o) {
  const std::vector<int64_t> axes = infer::normalize_axes("mean", "axes", x.rank(), o.axes, true);
  int64_t count = 1;
  for (int64_t a : axes) count *= x.shape()[static_cast<int>(a)];
  return sum(x, o) / static_cast<double>(count);
}

Expr variance(Expr x, const ReduceOptions& o) {
  Expr d = x - mean(x, {.axes = o.axes, .keep_axes = true});
  return mean(d * d, o);
}

Expr relu(Expr x) { return select(x > 0, x, constant(0.0, x.dtype())); }

Expr gelu(Expr x, GeluForm form) {
  if (form == GeluForm::Exact) return x * (1.0 + erf(x / std::numbers::sqrt2)) * 0.5;
  const double c = std::sqrt(2.0 / std::numbers::pi);
  return x * (1.0 + tanh(c * (x + 0.044715 * x * x * x))) * 0.5;
}

Expr softplus(Expr x) { return positive_part(x) + log1p(exp(-abs(x))); }

Expr sigmoid_cross_entropy(Expr logits, Expr labels) {
  return positive_part(logits) - logits * labels + log1p(exp(-abs(logits)));
}

Expr softmax_cross_entropy(Expr logits, Expr labels, int64_t axis) {
  return -sum(labels * log_softmax(logits, axis), {.axes = {axis}});
}

}  // namespace sluice
