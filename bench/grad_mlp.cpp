// One online training step of an MLP 784-256-10 (relu, softmax
// cross-entropy), batch 128, f32: the gradient from value_and_grad with sgd,
// against the same step with its backward pass derived by hand, both traced
// and compiled by sluice. The row says what automatic differentiation
// costs over what a user would write (ratio = hand time / grad time).

#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/autodiff.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/ops.h>
#include <sluice/ops/optimizers.h>

namespace sluice::bench {
namespace {

constexpr int64_t kBatch = 128, kIn = 784, kHidden = 256, kClasses = 10;
constexpr double kRate = 0.1;

// W1, b1, W2, b2, x, labels (one-hot).
std::vector<Spec> step_specs() {
  return {f32({kIn, kHidden}), f32({kHidden}), f32({kHidden, kClasses}), f32({kClasses}),
          f32({kBatch, kIn}),  f32({kBatch, kClasses})};
}

Expr loss_of(Expr w1, Expr b1, Expr w2, Expr b2, Expr x, Expr y) {
  Expr logits = dot(relu(dot(x, w1) + b1), w2) + b2;
  return mean(softmax_cross_entropy(logits, y));
}

// (params, x, y) -> (loss, params after one sgd step), gradients by value_and_grad.
Function step_by_grad() {
  Function vg = value_and_grad(step_specs(), loss_of, {0, 1, 2, 3});
  optimizers::Optimizer sgd = optimizers::sgd(kRate);
  return trace(step_specs(), [&](Expr w1, Expr b1, Expr w2, Expr b2, Expr x, Expr y) {
    Tuple r = call(vg, {w1, b1, w2, b2, x, y});
    optimizers::Update u = sgd.update({w1, b1, w2, b2}, {r[1], r[2], r[3], r[4]}, {});
    return tuple(r[0], u.params[0], u.params[1], u.params[2], u.params[3]);
  });
}

// The same step with the backward pass written out.
Function step_by_hand() {
  return trace(step_specs(), [](Expr w1, Expr b1, Expr w2, Expr b2, Expr x, Expr y) {
    Expr pre = dot(x, w1) + b1;
    Expr h = relu(pre);
    Expr logits = dot(h, w2) + b2;
    Expr loss = mean(softmax_cross_entropy(logits, y));
    Expr d_logits = (softmax(logits) - y) / static_cast<double>(kBatch);
    Expr d_w2 = dot(h, {0}, {}, d_logits, {0}, {});
    Expr d_b2 = sum(d_logits, {.axes = {0}});
    Expr d_pre = select(pre > 0, dot(d_logits, {1}, {}, w2, {1}, {}), 0.0);
    Expr d_w1 = dot(x, {0}, {}, d_pre, {0}, {});
    Expr d_b1 = sum(d_pre, {.axes = {0}});
    return tuple(loss, w1 - kRate * d_w1, b1 - kRate * d_b1, w2 - kRate * d_w2, b2 - kRate * d_b2);
  });
}

void BM_grad_mlp_step(benchmark::State& state) {
  std::vector<Tensor> args;
  unsigned seed = 1;
  for (const Spec& s : step_specs()) {
    std::vector<float> v = uniform_floats(static_cast<size_t>(s.size()), -0.1f, 0.1f, seed++);
    args.push_back(tensor(v, s.shape));
  }
  std::vector<float> labels(static_cast<size_t>(kBatch * kClasses), 0.0f);
  for (int64_t i = 0; i < kBatch; ++i) labels[static_cast<size_t>(i * kClasses + i % kClasses)] = 1.0f;
  args[5] = tensor(labels, Shape{kBatch, kClasses});

  Executable by_grad = compile(step_by_grad(), host()), by_hand = compile(step_by_hand(), host());
  std::vector<Tensor> g = by_grad.run(args), h = by_hand.run(args);
  for (size_t i = 0; i < g.size(); ++i)
    if (!check_close(state, g[i].data<float>(), h[i].data<float>(), 1e-4)) return;

  Samples s = interleave(state, timed([&] { by_grad.run(args)[0].wait(); }),
                         timed([&] { by_hand.run(args)[0].wait(); }));
  report_speedup("grad_mlp_step", s, 0.95);
}
BENCHMARK(BM_grad_mlp_step)->Iterations(41)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sluice::bench
