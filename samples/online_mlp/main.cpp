// online_mlp: a two-hidden-layer MLP trained online from a stream of batches.
//
//   batches ──────────────> train ──────────────────────────> progress
//   x f32[B][D]             accumulator: W1 b1 W2 b2 W3 b3    loss, accuracy
//   labels s64[B]           and Adam's state                  per batch
//
// Every batch is scored with the weights as they are, then one Adam step is
// taken on it, with the gradient of the mean softmax cross-entropy from
// value_and_grad: the accuracy printed is on examples the model has not
// learned from yet. The data: Gaussian clusters (--classes of them, in
// --dims dimensions) by default; with --features X.npy --labels Y.npy
// (f32[N][D], integers [N]) any data set, cut into batches by to_batched
// and streamed --epochs times. The initial weights are Glorot-uniform
// draws, or --params DIR's w1.npy b1.npy w2.npy b2.npy w3.npy b3.npy. Exits
// 0 when the mean accuracy over the last tenth of the batches reaches
// --min-accuracy. online_mlp.py beside it is the same program in Python,
// giving the same losses for the same files (tests/python).

#include <iostream>
#include <random>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <sluice/devices/backend.h>
#include <sluice/io/npy.h>
#include <sluice/ops/autodiff.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/optimizers.h>
#include <sluice/pipeline/pipeline.h>

#include "online_mlp/mlp.h"

using namespace sluice;
using namespace online_mlp;

struct Options {
  std::string features, labels;  // .npy files; empty: synthetic clusters
  std::string params;            // a directory of the initial weights' .npy files; empty: random
  int64_t report_every = 50;     // batches between progress lines
  int64_t batch = 64, hidden = 64, classes = 4, dims = 16, batches = 400, epochs = 3;
  double rate = 3e-3, min_accuracy = 0;
  unsigned seed = 1;
};

// The weights in `o.params`, as initial_params makes them (ShapeError otherwise).
Tensors load_params(const Options& o) {
  Tensors p;
  const int64_t sizes[] = {o.dims, o.hidden, o.hidden, o.classes};
  for (int layer = 0; layer < 3; ++layer) {
    for (const char* kind : {"w", "b"}) {
      const std::string path = fmt::format("{}/{}{}.npy", o.params, kind, layer + 1);
      Tensor t = npy::load(path);
      const Spec want = kind[0] == 'w' ? f32({sizes[layer], sizes[layer + 1]}) : f32({sizes[layer + 1]});
      if (t.spec() != want)
        throw ShapeError(error_message("--params " + path, "", want.str(), t.spec().str()));
      p.push_back(t);
    }
  }
  return p;
}

// Batches of K Gaussian clusters with random centres: (x f32[B][D], labels s64[B]).
std::shared_ptr<Source> synthetic(const Options& o) {
  auto rng = std::make_shared<std::mt19937>(o.seed + 1);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> centres(static_cast<size_t>(o.classes * o.dims));
  for (float& c : centres) c = 2.5f * normal(*rng);
  auto made = std::make_shared<int64_t>(0);
  return sources::generator({f32({o.batch, o.dims}), s64({o.batch})}, [=]() mutable -> std::optional<Tensors> {
    if ((*made)++ == o.batches) return std::nullopt;
    std::vector<float> x(static_cast<size_t>(o.batch * o.dims));
    std::vector<int64_t> y(static_cast<size_t>(o.batch));
    std::uniform_int_distribution<int64_t> pick(0, o.classes - 1);
    for (int64_t i = 0; i < o.batch; ++i) {
      y[static_cast<size_t>(i)] = pick(*rng);
      for (int64_t d = 0; d < o.dims; ++d)
        x[static_cast<size_t>(i * o.dims + d)] = centres[static_cast<size_t>(y[static_cast<size_t>(i)] * o.dims + d)] + normal(*rng);
    }
    return Tensors{tensor(x, Shape{o.batch, o.dims}), tensor(y, Shape{o.batch})};
  });
}

// The rows of X.npy and Y.npy in batches, --epochs times over.
std::shared_ptr<Source> from_files(Options& o) {
  Tensor x = npy::load(o.features), y = npy::load(o.labels);
  if (x.spec().dtype != DType::F32 || x.rank() != 2)
    throw ShapeError(error_message("--features " + o.features, "", "f32[N][D]", x.spec().str()));
  if (!is_integer(y.spec().dtype) || y.rank() != 1 || y.spec().shape.dims()[0] != x.spec().shape.dims()[0])
    throw ShapeError(error_message("--labels " + o.labels, "",
                                   fmt::format("integers [{}]", x.spec().shape.dims()[0]), y.spec().str()));
  y = compile(trace({y.spec()}, [](Expr v) { return as_type(v, DType::S64); })).run({y})[0];
  o.dims = x.spec().shape.dims()[1];
  auto xs = std::make_shared<Batches>(to_batched(x, o.batch)), ys = std::make_shared<Batches>(to_batched(y, o.batch));
  o.batches = xs->size() * o.epochs;
  auto next = std::make_shared<int64_t>(0);
  const int64_t total = o.batches;
  return sources::generator({f32({o.batch, o.dims}), s64({o.batch})}, [=]() -> std::optional<Tensors> {
    if (*next == total) return std::nullopt;
    const int64_t i = (*next)++ % xs->size();
    return Tensors{(*xs)[i], (*ys)[i]};
  });
}

int run(Options o) {
  std::shared_ptr<Source> batches = o.features.empty() ? synthetic(o) : from_files(o);
  std::mt19937 rng(o.seed);
  Tensors params = o.params.empty() ? initial_params(o.dims, o.hidden, o.classes, rng) : load_params(o);
  const optimizers::Optimizer adam = optimizers::adam(o.rate);
  const Tensors acc = training_accumulator(params, adam);
  Function step = training_step(acc, adam, o.batch, o.dims, o.classes);

  Pipeline p;
  NodeId source = p.source("batches", batches);
  NodeId train = p.stage("train", step, {.acc = acc});
  std::vector<double> accuracy;
  NodeId progress = p.sink("progress", [&](const Tensors& t) {
    const double loss = t[0].to_vector<float>()[0];
    accuracy.push_back(t[1].to_vector<float>()[0]);
    const size_t n = accuracy.size();
    if (n % static_cast<size_t>(o.report_every) == 0 || n == static_cast<size_t>(o.batches))
      std::cout << fmt::format("batch {}: loss {:.7g}, accuracy {:.7g}\n", n, loss, accuracy.back());
  });
  p.connect(source, train);
  p.connect(train, progress);
  p.run();

  const size_t tail = std::max<size_t>(1, accuracy.size() / 10);
  double mean = 0;
  for (size_t i = accuracy.size() - tail; i < accuracy.size(); ++i) mean += accuracy[i] / static_cast<double>(tail);
  std::cout << "accuracy over the last " << tail << " batches, each before its step: " << mean << "\n";
  return mean >= o.min_accuracy ? 0 : 1;
}

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"online_mlp: an MLP trained online from a stream of batches"};
  app.add_option("--features", o.features, "f32[N][D] .npy file (default: synthetic clusters)")->check(CLI::ExistingFile);
  app.add_option("--labels", o.labels, "integer [N] .npy file of class indices")->check(CLI::ExistingFile);
  app.add_option("--batch", o.batch, "examples per batch")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  app.add_option("--hidden", o.hidden, "units in each hidden layer")->check(CLI::Range(1, 1 << 16))->capture_default_str();
  app.add_option("--classes", o.classes, "classes")->check(CLI::Range(2, 1 << 16))->capture_default_str();
  app.add_option("--dims", o.dims, "synthetic: input dimensions")->check(CLI::Range(1, 1 << 16))->capture_default_str();
  app.add_option("--batches", o.batches, "synthetic: batches to stream")->check(CLI::Range(1, 1 << 30))->capture_default_str();
  app.add_option("--epochs", o.epochs, "files: passes over the data")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  app.add_option("--rate", o.rate, "Adam's learning rate")->check(CLI::Range(0.0, 10.0))->capture_default_str();
  app.add_option("--min-accuracy", o.min_accuracy, "exit 1 below this final accuracy")->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", o.seed, "random seed")->capture_default_str();
  app.add_option("--params", o.params, "directory of w1.npy b1.npy ... b3.npy, the initial weights")
      ->check(CLI::ExistingDirectory);
  app.add_option("--report-every", o.report_every, "batches between progress lines")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (o.features.empty() != o.labels.empty()) {
    std::cerr << "online_mlp: --features and --labels go together\n";
    return 2;
  }
  try {
    return run(o);
  } catch (const Error& e) {
    std::cerr << "online_mlp: " << e.what() << "\n";
    return 1;
  }
}
