#include <sluice/ops/optimizers.h>

#include <utility>

#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/ops/ops.h>

namespace sluice::optimizers {
namespace {

Expr zeros_like(Expr p) { return broadcast(constant(0.0, p.dtype()), p.shape()); }

// Every parameter a real float, and `what` (grads or a part of the state)
// one tensor per parameter with the parameter's spec.
void check_like(const std::string& optimizer, const Tuple& params, const Tuple& xs, const std::string& what) {
  if (xs.size() != params.size())
    throw ShapeError(error_message(optimizer, what,
                                   fmt::format("{} tensors (one per parameter)", params.size()), xs.size()));
  for (size_t i = 0; i < params.size(); ++i) {
    if (!is_float(params[i].dtype()))
      throw TypeError(
          error_message(optimizer, fmt::format("parameter {}", i), "a real float type", params[i].spec()));
    if (xs[i].spec() != params[i].spec())
      throw ShapeError(error_message(optimizer, fmt::format("{} {}", what, i),
                                     fmt::format("{} (the parameter's spec)", params[i].spec()),
                                     xs[i].spec()));
  }
}

void check_state_size(const std::string& optimizer, const Tuple& state, size_t expected) {
  if (state.size() != expected)
    throw ShapeError(
        error_message(optimizer, "state", fmt::format("{} tensors (init's result)", expected), state.size()));
}

Optimizer adam_like(std::string name, double learning_rate, const AdamOptions& o, double weight_decay) {
  Optimizer opt;
  opt.name = name;
  opt.init = [](const Tuple& params) {
    Tuple state{constant(0.0, DType::S64)};
    for (int moment = 0; moment < 2; ++moment)
      for (const Expr& p : params) state.push_back(zeros_like(p));
    return state;
  };
  opt.update = [=](const Tuple& params, const Tuple& grads, const Tuple& state) {
    check_like(name, params, grads, "grads");
    const size_t n = params.size();
    check_state_size(name, state, 1 + 2 * n);
    if (state[0].spec() != s64({}))
      throw TypeError(error_message(name, "state 0 (the step count)", "s64[]", state[0].spec()));
    check_like(name, params, Tuple(state.begin() + 1, state.begin() + 1 + static_cast<ptrdiff_t>(n)), "state m");
    check_like(name, params, Tuple(state.begin() + 1 + static_cast<ptrdiff_t>(n), state.end()), "state v");
    Expr t = state[0] + 1;
    Update u;
    u.state.push_back(t);
    Tuple ms, vs;
    for (size_t i = 0; i < n; ++i) {
      const Expr& g = grads[i];
      ms.push_back(o.beta1 * state[1 + i] + (1 - o.beta1) * g);
      vs.push_back(o.beta2 * state[1 + n + i] + (1 - o.beta2) * g * g);
      Expr step = as_type(t, params[i].dtype());
      Expr m_hat = ms[i] / (1 - pow(constant(o.beta1, params[i].dtype()), step));
      Expr v_hat = vs[i] / (1 - pow(constant(o.beta2, params[i].dtype()), step));
      Expr direction = m_hat / (sqrt(v_hat) + o.eps);
      if (weight_decay != 0) direction = direction + weight_decay * params[i];
      u.params.push_back(params[i] - learning_rate * direction);
    }
    u.state.insert(u.state.end(), ms.begin(), ms.end());
    u.state.insert(u.state.end(), vs.begin(), vs.end());
    return u;
  };
  return opt;
}

}  // namespace

Optimizer sgd(double learning_rate) {
  Optimizer opt;
  opt.name = "sgd";
  opt.init = [](const Tuple&) { return Tuple{}; };
  opt.update = [=](const Tuple& params, const Tuple& grads, const Tuple& state) {
    check_like("sgd", params, grads, "grads");
    check_state_size("sgd", state, 0);
    Update u;
    for (size_t i = 0; i < params.size(); ++i) u.params.push_back(params[i] - learning_rate * grads[i]);
    return u;
  };
  return opt;
}

Optimizer momentum(double learning_rate, double beta) {
  Optimizer opt;
  opt.name = "momentum";
  opt.init = [](const Tuple& params) {
    Tuple state;
    for (const Expr& p : params) state.push_back(zeros_like(p));
    return state;
  };
  opt.update = [=](const Tuple& params, const Tuple& grads, const Tuple& state) {
    check_like("momentum", params, grads, "grads");
    check_like("momentum", params, state, "state");
    Update u;
    for (size_t i = 0; i < params.size(); ++i) {
      u.state.push_back(beta * state[i] + grads[i]);
      u.params.push_back(params[i] - learning_rate * u.state[i]);
    }
    return u;
  };
  return opt;
}

Optimizer adam(double learning_rate, const AdamOptions& options) {
  return adam_like("adam", learning_rate, options, 0);
}

Optimizer adamw(double learning_rate, const AdamOptions& options, double weight_decay) {
  return adam_like("adamw", learning_rate, options, weight_decay);
}

}  // namespace sluice::optimizers
