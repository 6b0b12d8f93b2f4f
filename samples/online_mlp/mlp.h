#pragma once
// online_mlp's model and training step, shared by its program (main.cpp)
// and bench_python_frontend's py_pipeline_mlp, which times the same
// pipeline built in C++ against online_mlp.py's built from Python.

#include <cstdint>
#include <random>

#include <sluice/devices/backend.h>
#include <sluice/ops/optimizers.h>
#include <sluice/stream/step.h>  // Tensors

namespace online_mlp {

// The model: two relu layers and a linear one. p: W1 b1 W2 b2 W3 b3.
sluice::Expr logits_of(const sluice::Tuple& p, sluice::Expr x);

// Glorot-uniform weights, zero biases: W1 b1 W2 b2 W3 b3.
sluice::Tensors initial_params(int64_t dims, int64_t hidden, int64_t classes, std::mt19937& rng);

// The training stage's initial accumulator: the parameters, then Adam's state for them.
sluice::Tensors training_accumulator(const sluice::Tensors& params,
                                     const sluice::optimizers::Optimizer& adam);

// (x, labels, params..., adam state...) -> (loss, accuracy, params..., state...);
// acc: the six parameters, then Adam's state. Each batch is scored with the
// weights as they are, then one Adam step is taken on the gradient of the
// mean softmax cross-entropy.
sluice::Function training_step(const sluice::Tensors& acc, const sluice::optimizers::Optimizer& adam,
                               int64_t batch, int64_t dims, int64_t classes);

}  // namespace online_mlp
