#pragma once
// Optimizers as pure functions over traced tensors, in the manner of optax
// and Elixir's Polaris: an optimizer's state is a Tuple that the caller
// carries, typically in a pipeline stage's accumulator beside the
// parameters, so a training step is one compiled function
//   (params, state, batch) -> (params', state').
//
//   auto opt = sluice::optimizers::adam(1e-3);
//   auto step = sluice::trace(specs, [&](std::vector<sluice::Expr> in) {
//     sluice::Tuple params(in.begin(), in.begin() + 2), state(in.begin() + 2, in.end() - 1);
//     sluice::Tuple grads = ...;                       // value_and_grad of the loss
//     auto [new_params, new_state] = opt.update(params, grads, state);
//     new_params.insert(new_params.end(), new_state.begin(), new_state.end());
//     return new_params;
//   });
//
// `init(params)` traces the initial state (zeros, a step count of 0), so
// it compiles and runs like any function to give the accumulator's first
// value. Every update checks that grads and state match params and throws
// ShapeError/TypeError naming the optimizer otherwise. Learning rates and
// coefficients are weak scalars: they take each parameter's type.

#include <functional>
#include <string>

#include <sluice/ops/expr.h>

namespace sluice::optimizers {

struct Update {
  Tuple params;  // the parameters after the step, one per parameter
  Tuple state;   // the optimizer's state after the step
};

struct Optimizer {
  std::string name;  // "adam": names the optimizer in errors
  // The state before the first step, for parameters like `params` (their
  // specs matter, not their values).
  std::function<Tuple(const Tuple& params)> init;
  // One step: params moved against grads (one per parameter, same specs).
  std::function<Update(const Tuple& params, const Tuple& grads, const Tuple& state)> update;
};

// p -= learning_rate * g. No state.
Optimizer sgd(double learning_rate);

// Heavy-ball momentum (optax.sgd with momentum): v = beta * v + g;
// p -= learning_rate * v. State: one velocity per parameter.
Optimizer momentum(double learning_rate, double beta = 0.9);

struct AdamOptions {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
};

// Adam (Kingma and Ba, 2015), as optax.adam: m = b1 m + (1 - b1) g,
// v = b2 v + (1 - b2) g^2, p -= lr * m^ / (sqrt(v^) + eps) with the
// bias-corrected m^ = m / (1 - b1^t), v^ = v / (1 - b2^t). State: the step
// count t (s64 scalar), then every m, then every v.
Optimizer adam(double learning_rate, const AdamOptions& options = {});

// AdamW (Loshchilov and Hutter, 2019), as optax.adamw: Adam's step plus
// decoupled weight decay, p -= lr * (m^ / (sqrt(v^) + eps) + weight_decay * p).
// The same state as adam.
Optimizer adamw(double learning_rate, const AdamOptions& options = {}, double weight_decay = 1e-4);

}  // namespace sluice::optimizers
