// The two compiled stages. Each is a function of one message's tensors and
// the stage's accumulator, returning the message for the next node and the
// new accumulator; sluice traces it once and runs it on every chunk.

#include <cmath>
#include <numbers>

#include <sensor_monitor/sensor_monitor.h>

namespace sluice::sensor_monitor {
namespace {

// The periodic Hann window, the usual taper before a spectrum.
Expr hann(int64_t n) {
  std::vector<float> w(static_cast<size_t>(n));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(
        0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(n)));
  return constant(w, Shape{n});
}

}  // namespace

std::vector<Spec> signal_spec(const Config& c) {
  return {f32({c.windows_per_chunk, c.channels, c.window}), f32({c.windows_per_chunk}), s64({})};
}

std::vector<Spec> feature_spec(const Config& c) {
  return {f32({c.windows_per_chunk, c.channels * c.bands}), f32({c.windows_per_chunk}), s64({})};
}

std::vector<Spec> score_spec(const Config& c) {
  return {f32({c.windows_per_chunk}), f32({c.windows_per_chunk}), s64({})};
}

std::vector<Spec> tachometer_spec(const Config& c) { return {f32({c.tachometer_rows})}; }

std::vector<Spec> joined_spec(const Config& c) {
  std::vector<Spec> s = score_spec(c);
  s.push_back(f32({c.windows_per_chunk}));
  s.push_back(Spec{DType::Pred, Shape{c.windows_per_chunk}});
  return s;
}

Tensors spectrum_acc(const Config& c) {
  return {zeros(f32({})), zeros(f32({c.channels, c.bands})), zeros(f32({c.channels, c.bands}))};
}

// The detector's weights and bias, then the optimizer's state for them.
Tensors detector_acc(const Config& c) {
  Tensors acc{zeros(f32({c.channels * c.bands})), zeros(f32({}))};
  const optimizers::Optimizer adam = detector_optimizer(c);
  Function init = trace({acc[0].spec(), acc[1].spec()}, [&](Expr w, Expr b) { return adam.init({w, b}); });
  for (const Tensor& t : compile(init).run(acc)) acc.push_back(t);
  return acc;
}

optimizers::Optimizer detector_optimizer(const Config& c) { return optimizers::adam(c.learning_rate); }

// spectrum(signal[W][C][N], labels, born, count, mean[C][B], m2[C][B]):
// the log energy of each of B equal frequency bands of each channel's
// window, normalised by the running mean and variance of every window seen
// so far, this chunk's included.
Function spectrum_function(const Config& c) {
  const int64_t w = c.windows_per_chunk, n = c.window, b = c.bands;
  std::vector<Spec> params = signal_spec(c);
  for (const Tensor& t : spectrum_acc(c)) params.push_back(t.spec());
  return trace(params, [=](Expr signal, Expr labels, Expr born, Expr count, Expr mean, Expr m2) {
    Expr spectrum = fft(signal * hann(n));  // c64[W][C][N]
    Expr power = real(spectrum) * real(spectrum) + imag(spectrum) * imag(spectrum);
    // A real signal's spectrum is symmetric: keep bins 0 .. N/2 - 1, then B bands of them.
    Expr half = slice(power, {0, 0, 0}, {w, c.channels, n / 2});
    Expr band_power = sum(reshape(half, Shape{w, c.channels, b, n / 2 / b}), {.axes = {3}});
    Expr energy = log(band_power + 1e-6);  // [W][C][B]

    // Chan et al.'s merge of this chunk's mean and squared deviations into the running ones.
    Expr chunk_mean = sum(energy, {.axes = {0}}) / static_cast<double>(w);
    Expr deviation = energy - chunk_mean;
    Expr chunk_m2 = sum(deviation * deviation, {.axes = {0}});
    Expr total = count + static_cast<double>(w);
    Expr delta = chunk_mean - mean;
    Expr new_mean = mean + delta * (static_cast<double>(w) / total);
    Expr new_m2 = m2 + chunk_m2 + delta * delta * (count * static_cast<double>(w) / total);

    Expr z = (energy - new_mean) * rsqrt(new_m2 / total + 1e-6);
    Expr features = reshape(z, Shape{w, c.channels * b});
    return tuple(features, labels, born, total, new_mean, new_m2);
  });
}

// detector(features[W][F], labels, born, weights[F], bias, adam state...):
// logistic regression. Scores the chunk with the weights as they are (so
// every score is a prediction on windows the detector has not learned
// from), then takes one Adam step on the mean log loss of the chunk's
// labels, its gradient by value_and_grad.
Function detector_function(const Config& c) {
  const std::vector<Spec> features = feature_spec(c);
  const Tensors acc = detector_acc(c);
  std::vector<Spec> params = features;
  for (const Tensor& t : acc) params.push_back(t.spec());
  // (x, y, w, b) -> (loss, dloss/dw, dloss/db)
  const Function loss = value_and_grad(
      {features[0], features[1], acc[0].spec(), acc[1].spec()},
      [](Expr x, Expr y, Expr w, Expr b) { return mean(sigmoid_cross_entropy(dot(x, w) + b, y)); }, {2, 3});
  const optimizers::Optimizer adam = detector_optimizer(c);
  return trace(params, [=](std::vector<Expr> in) {
    Expr x = in[0], labels = in[1], born = in[2], weights = in[3], bias = in[4];
    Expr scores = sigmoid(dot(x, weights) + bias);  // [W]
    Tuple g = call(loss, {x, labels, weights, bias});
    optimizers::Update step = adam.update({weights, bias}, {g[1], g[2]}, Tuple(in.begin() + 5, in.end()));
    Tuple out{scores, labels, born, step.params[0], step.params[1]};
    out.insert(out.end(), step.state.begin(), step.state.end());
    return out;
  });
}

}  // namespace sluice::sensor_monitor
