#pragma once
// Model helpers composed from ops (as jax.nn, optax's losses and Nx's
// mean/variance): no kernels of their own, so the backends fuse them and
// grad differentiates them like any other ops. Each is numerically stable:
// exponentials are taken of values shifted by their maximum or of -|x|, so
// large logits neither overflow nor lose the small terms.
//
//   Expr logits = sluice::dot(x, w) + b;                       // f32[batch][classes]
//   Expr loss = sluice::mean(sluice::softmax_cross_entropy(logits, sluice::one_hot(y, 10)));
//
// Axes may be negative (counted from the end). Thread safety: as tracing.

#include <cstdint>

#include <sluice/ops/ops.h>

namespace sluice {

// log(sum(exp(x))) over the axes of `o` (all by default).
Expr logsumexp(Expr x, const ReduceOptions& o = {});
// exp(x) / sum(exp(x)) along `axis`, and its logarithm. softmax along the
// last axis of f32 or f64 is the block "softmax" (ops/block.h): the host
// runs it as one kernel.
Expr softmax(Expr x, int64_t axis = -1);
Expr log_softmax(Expr x, int64_t axis = -1);
// softmax as ops alone, never the block: the block's fallback, what every
// backend without the native kernel runs.
Expr softmax_as_ops(Expr x, int64_t axis = -1);

// indices (integers, any shape) -> [..., classes] of `dtype`: 1 where the
// last axis' position equals the index, else 0 (an index outside [0,
// classes) gives a row of zeros).
Expr one_hot(Expr indices, int64_t classes, DType dtype = DType::F32);

// The mean over the axes of `o` (all by default); integers average in f32.
Expr mean(Expr x, const ReduceOptions& o = {});
// The mean squared deviation from the mean (numpy's var with ddof 0).
Expr variance(Expr x, const ReduceOptions& o = {});

// max(x, 0), whose gradient at 0 is 0 (as jax.nn.relu).
Expr relu(Expr x);
enum class GeluForm : uint8_t {
  Exact,  // x * (1 + erf(x / sqrt 2)) / 2
  Tanh,   // x * (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2
};
Expr gelu(Expr x, GeluForm form = GeluForm::Exact);
// log(1 + exp(x)), as max(x, 0) + log1p(exp(-|x|)).
Expr softplus(Expr x);

// Per element, the cross-entropy of sigmoid(logits) against labels in
// [0, 1] (optax's sigmoid_binary_cross_entropy):
// max(x, 0) - x * labels + log1p(exp(-|x|)).
Expr sigmoid_cross_entropy(Expr logits, Expr labels);
// Per example, -sum(labels * log_softmax(logits)) along `axis` (optax's
// softmax_cross_entropy); labels are probabilities, such as one_hot's.
Expr softmax_cross_entropy(Expr logits, Expr labels, int64_t axis = -1);

}  // namespace sluice
