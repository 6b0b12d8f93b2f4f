// Model helpers, random numbers and optimizers in Python, as submodules:
// sluice.nn (softmax, relu, cross-entropies, ...), sluice.random (JAX's
// threefry keys and draws) and sluice.optimizers (optax's: sgd, momentum,
// adam, adamw). All work on Exprs inside traced functions.

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include <sluice/base/error.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/optimizers.h>
#include <sluice/ops/random.h>

#include "bindings.h"

namespace sluice::python {
namespace {

nb::tuple python_tuple(const Tuple& t) { return nb::tuple(nb::cast(t)); }

void bind_nn_helpers(nb::module_& nn) {
  for (const char* name : {"logsumexp", "mean", "variance"}) {
    const std::string n = name;
    nn.def(
        name,
        [n](const Expr& x, nb::handle axes, bool keep) {
          const ReduceOptions o = reduce_options(axes, keep);
          return n == "logsumexp" ? logsumexp(x, o) : n == "mean" ? mean(x, o) : variance(x, o);
        },
        nb::arg("x"), nb::arg("axes") = nb::none(), nb::arg("keep_axes") = false);
  }
  nn.def(
      "softmax", [](const Expr& x, int64_t axis) { return softmax(x, axis); }, nb::arg("x"),
      nb::arg("axis") = -1);
  nn.def(
      "log_softmax", [](const Expr& x, int64_t axis) { return log_softmax(x, axis); }, nb::arg("x"),
      nb::arg("axis") = -1);
  nn.def(
      "one_hot",
      [](const Expr& i, int64_t classes, nb::handle dtype) {
        return one_hot(i, classes, dtype_of_object(dtype, "one_hot"));
      },
      nb::arg("indices"), nb::arg("classes"), nb::arg("dtype") = DType::F32);
  nn.def(
      "relu", [](const Expr& x) { return relu(x); }, nb::arg("x"));
  nn.def(
      "gelu",
      [](const Expr& x, bool approximate) { return gelu(x, approximate ? GeluForm::Tanh : GeluForm::Exact); },
      nb::arg("x"), nb::arg("approximate") = false);
  nn.def(
      "softplus", [](const Expr& x) { return softplus(x); }, nb::arg("x"));
  nn.def(
      "sigmoid", [](const Expr& x) { return sigmoid(x); }, nb::arg("x"));
  nn.def(
      "sigmoid_cross_entropy",
      [](const Expr& l, nb::handle y) {
        return sigmoid_cross_entropy(l, expr_of(y, "sigmoid_cross_entropy"));
      },
      nb::arg("logits"), nb::arg("labels"));
  nn.def(
      "softmax_cross_entropy",
      [](const Expr& l, nb::handle y, int64_t axis) {
        return softmax_cross_entropy(l, expr_of(y, "softmax_cross_entropy"), axis);
      },
      nb::arg("logits"), nb::arg("labels"), nb::arg("axis") = -1);
}

void bind_random(nb::module_& r) {
  r.def(
      "key", [](uint64_t seed) { return random_key(seed); }, nb::arg("seed"),
      "The key of a seed, as jax.random.PRNGKey: u32[2].");
  r.def(
      "split", [](const Expr& key, int64_t n) { return random_split(key, n); }, nb::arg("key"),
      nb::arg("num") = 2);
  r.def(
      "key_at", [](const Expr& keys, int64_t i) { return random_key_at(keys, i); }, nb::arg("keys"),
      nb::arg("i"));
  r.def(
      "uniform",
      [](const Expr& key, std::vector<int64_t> shape, nb::handle dtype, double lo, double hi) {
        return random_uniform(key, Shape(std::move(shape)), dtype_of_object(dtype, "random.uniform"), lo, hi);
      },
      nb::arg("key"), nb::arg("shape") = std::vector<int64_t>{}, nb::arg("dtype") = DType::F32,
      nb::arg("minval") = 0.0, nb::arg("maxval") = 1.0);
  r.def(
      "normal",
      [](const Expr& key, std::vector<int64_t> shape, nb::handle dtype, double mean, double std) {
        return random_normal(key, Shape(std::move(shape)), dtype_of_object(dtype, "random.normal"), mean,
                             std);
      },
      nb::arg("key"), nb::arg("shape") = std::vector<int64_t>{}, nb::arg("dtype") = DType::F32,
      nb::arg("mean") = 0.0, nb::arg("std") = 1.0);
}

void bind_optimizers(nb::module_& o) {
  using optimizers::Optimizer;
  nb::class_<Optimizer>(
      o, "Optimizer",
      "A pure optimizer (optax's): state = init(params); params, state = update(params, grads, "
      "state), on Exprs inside a traced function.")
      .def_ro("name", &Optimizer::name)
      .def(
          "init",
          [](const Optimizer& opt, nb::handle params) {
            return python_tuple(opt.init(exprs_of(params, "optimizer init")));
          },
          nb::arg("params"))
      .def(
          "update",
          [](const Optimizer& opt, nb::handle params, nb::handle grads, nb::handle state) {
            const optimizers::Update u =
                opt.update(exprs_of(params, "optimizer update"), exprs_of(grads, "optimizer update"),
                           exprs_of(state, "optimizer update"));
            return nb::make_tuple(python_tuple(u.params), python_tuple(u.state));
          },
          nb::arg("params"), nb::arg("grads"), nb::arg("state"));
  o.def("sgd", &optimizers::sgd, nb::arg("learning_rate"));
  o.def("momentum", &optimizers::momentum, nb::arg("learning_rate"), nb::arg("beta") = 0.9);
  o.def(
      "adam",
      [](double lr, double b1, double b2, double eps) {
        return optimizers::adam(lr, {.beta1 = b1, .beta2 = b2, .eps = eps});
      },
      nb::arg("learning_rate"), nb::arg("b1") = 0.9, nb::arg("b2") = 0.999, nb::arg("eps") = 1e-8);
  o.def(
      "adamw",
      [](double lr, double b1, double b2, double eps, double weight_decay) {
        return optimizers::adamw(lr, {.beta1 = b1, .beta2 = b2, .eps = eps}, weight_decay);
      },
      nb::arg("learning_rate"), nb::arg("b1") = 0.9, nb::arg("b2") = 0.999, nb::arg("eps") = 1e-8,
      nb::arg("weight_decay") = 1e-4);
}

}  // namespace

void bind_nn(nb::module_& m) {
  nb::module_ nn = m.def_submodule("nn", "Model helpers: softmax, relu, gelu, cross-entropies, ...");
  bind_nn_helpers(nn);
  nb::module_ random = m.def_submodule("random", "Counter-based random numbers, as jax.random.");
  bind_random(random);
  nb::module_ optimizers = m.def_submodule("optimizers", "Optimizers as pure functions, as optax.");
  bind_optimizers(optimizers);
}

}  // namespace sluice::python
