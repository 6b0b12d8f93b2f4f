// online_mlp's model and training step (mlp.h).

#include "online_mlp/mlp.h"

#include <cmath>
#include <vector>

#include <sluice/ops/autodiff.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/ops.h>

using namespace sluice;

namespace online_mlp {

Expr logits_of(const Tuple& p, Expr x) {
  Expr h1 = relu(dot(x, p[0]) + p[1]);
  Expr h2 = relu(dot(h1, p[2]) + p[3]);
  return dot(h2, p[4]) + p[5];
}

Tensors initial_params(int64_t dims, int64_t hidden, int64_t classes, std::mt19937& rng) {
  Tensors p;
  const int64_t sizes[] = {dims, hidden, hidden, classes};
  for (int layer = 0; layer < 3; ++layer) {
    const int64_t in = sizes[layer], out = sizes[layer + 1];
    std::uniform_real_distribution<float> u(-1, 1);
    const float scale = std::sqrt(6.0f / static_cast<float>(in + out));
    std::vector<float> w(static_cast<size_t>(in * out));
    for (float& v : w) v = u(rng) * scale;
    p.push_back(tensor(w, Shape{in, out}));
    p.push_back(zeros(f32({out})));
  }
  return p;
}

Function training_step(const Tensors& acc, const optimizers::Optimizer& adam, int64_t batch, int64_t dims,
                       int64_t classes) {
  std::vector<Spec> loss_specs{f32({batch, dims}), s64({batch})};
  for (size_t i = 0; i < 6; ++i) loss_specs.push_back(acc[i].spec());
  // Gradients with respect to the six parameters (inputs 2 to 7).
  Function loss = value_and_grad(loss_specs,
                                 [classes](std::vector<Expr> in) {
                                   Expr logits = logits_of(Tuple(in.begin() + 2, in.end()), in[0]);
                                   return mean(softmax_cross_entropy(logits, one_hot(in[1], classes)));
                                 },
                                 {2, 3, 4, 5, 6, 7});
  std::vector<Spec> specs = loss_specs;
  for (size_t i = 6; i < acc.size(); ++i) specs.push_back(acc[i].spec());
  return trace(specs, [=](std::vector<Expr> in) {
    const Tuple params(in.begin() + 2, in.begin() + 8), state(in.begin() + 8, in.end());
    Tuple args(in.begin(), in.begin() + 8);
    Tuple r = call(loss, args);  // loss, then a gradient per parameter
    Expr predicted = argmax(logits_of(params, in[0]), {.axis = 1});
    Expr accuracy = mean(as_type(equal(predicted, in[1]), DType::F32));
    optimizers::Update step = adam.update(params, Tuple(r.begin() + 1, r.end()), state);
    Tuple out{r[0], accuracy};
    out.insert(out.end(), step.params.begin(), step.params.end());
    out.insert(out.end(), step.state.begin(), step.state.end());
    return out;
  });
}

Tensors training_accumulator(const Tensors& params, const optimizers::Optimizer& adam) {
  std::vector<Spec> param_specs;
  for (const Tensor& t : params) param_specs.push_back(t.spec());
  Tensors acc = params;
  for (const Tensor& t : compile(trace(param_specs, adam.init)).run(params)) acc.push_back(t);
  return acc;
}

}  // namespace online_mlp
