// sluice from Python against the same work done without it, in one
// process: this program embeds the Python of tests/python's venv (where
// `make test`, or bench-results before it runs this, installs the package)
// and calls bench/python_frontend.py's trials, interleaved with their
// baselines round by round.
//   py_dispatch_add4  a jitted add of four f32[4] called from Python and an
//                     element read, against numpy doing the same: ratio
//                     numpy / sluice, goal >= 0.5
//   py_stream_chunk   a stream's send + recv of a tiny chunk from Python
//                     against the same stream driven from C++ here: goal >= 0.5
//   py_pipeline_mlp   the online MLP's pipeline (samples/online_mlp) built
//                     from Python (online_mlp.py) against the same built in
//                     C++ (mlp.h), 400 batches a run (the sample's
//                     defaults): goal >= 0.95
// The extension holds a copy of sluice of its own; the C++ baseline runs on
// this program's, each with its own host pool (idle while the other runs).

#include <Python.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <sluice/pipeline/pipeline.h>
#include <sluice/stream/stream.h>

#include "bench/bench_report.h"
#include "online_mlp/mlp.h"

namespace sluice::bench {
namespace {

// The interpreter, started once with the venv's Python as its program so
// that site finds the venv's packages, and bench/ on its path.
PyObject* frontend() {
  static PyObject* module = [] {
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    PyConfig_SetBytesString(&config, &config.program_name, SLUICE_PYTHON_VENV "/bin/python");
    if (PyStatus_Exception(Py_InitializeFromConfig(&config)))
      throw std::runtime_error("cannot start Python from " SLUICE_PYTHON_VENV);
    PyConfig_Clear(&config);
    PyRun_SimpleString("import sys; sys.path.insert(0, '" SLUICE_SOURCE_DIR "/bench')");
    PyObject* m = PyImport_ImportModule("python_frontend");
    if (!m) {
      PyErr_Print();
      throw std::runtime_error(
          "cannot import bench/python_frontend.py with the sluice package of " SLUICE_PYTHON_VENV
          " (make test installs it)");
    }
    return m;
  }();
  return module;
}

// The trials a setup_* function returns, as Python callables.
PyObject* setup(const char* name, const char* argument = nullptr) {
  PyObject* trials = argument ? PyObject_CallMethod(frontend(), name, "s", argument)
                              : PyObject_CallMethod(frontend(), name, nullptr);
  if (!trials) {
    PyErr_Print();
    throw std::runtime_error(std::string("bench/python_frontend.py: ") + name + " failed");
  }
  return trials;
}

Trial python_trial(PyObject* fn, int calls) {
  return [fn, calls] {
    PyObject* r = PyObject_CallFunction(fn, "i", calls);
    if (!r) {
      PyErr_Print();
      throw std::runtime_error("bench/python_frontend.py: a trial failed");
    }
    const double seconds = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return seconds;
  };
}

void BM_py_dispatch_add4(benchmark::State& state) {
  PyObject* trials = setup("setup_dispatch_add4");
  constexpr int kCalls = 20000;
  Samples s = interleave(state, python_trial(PyTuple_GetItem(trials, 0), kCalls),
                         python_trial(PyTuple_GetItem(trials, 1), kCalls));
  report_speedup("py_dispatch_add4", s, 0.5);
  Py_DECREF(trials);
}
BENCHMARK(BM_py_dispatch_add4)->Iterations(15)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_py_stream_chunk(benchmark::State& state) {
  PyObject* from_python = setup("setup_stream_chunk");
  Stream s = stream([](Expr x, Expr acc) { return tuple(x + acc, acc + 1); }, {f32({4})}, {zeros(f32({4}))});
  const Tensor chunk = tensor<float>({1, 2, 3, 4});
  float first = 0;
  auto from_cpp = [&] {
    s.send(chunk);
    first = s.recv()[0].data<float>()[0];
  };
  constexpr int kCalls = 5000;
  Samples samples = interleave(state, python_trial(from_python, kCalls), timed(from_cpp, kCalls));
  report_speedup("py_stream_chunk", samples, 0.5);
  benchmark::DoNotOptimize(first);
  s.done();
  Py_DECREF(from_python);
}
BENCHMARK(BM_py_stream_chunk)->Iterations(15)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_py_pipeline_mlp(benchmark::State& state) {
  PyObject* from_python = setup("setup_pipeline_mlp", SLUICE_SOURCE_DIR "/samples");
  // bench/python_frontend.py's shapes.
  constexpr int64_t kBatch = 64, kDims = 16, kHidden = 64, kClasses = 4, kBatches = 400;
  std::mt19937 rng(1);
  std::vector<Tensors> batches;
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int64_t> label(0, kClasses - 1);
  for (int64_t b = 0; b < kBatches; ++b) {
    std::vector<float> x(kBatch * kDims);
    std::vector<int64_t> y(kBatch);
    for (float& v : x) v = normal(rng);
    for (int64_t& v : y) v = label(rng);
    batches.push_back({tensor(x, Shape{kBatch, kDims}), tensor(y, Shape{kBatch})});
  }
  const Tensors params = online_mlp::initial_params(kDims, kHidden, kClasses, rng);
  std::vector<float> losses;
  auto from_cpp = [&] {
    const optimizers::Optimizer adam = optimizers::adam(3e-3);
    const Tensors acc = online_mlp::training_accumulator(params, adam);
    Pipeline p;
    NodeId source = p.source("batches", sources::indexed({f32({kBatch, kDims}), s64({kBatch})},
                                                         [&](uint64_t i) -> std::optional<Tensors> {
                                                           if (i >= batches.size()) return std::nullopt;
                                                           return batches[i];
                                                         }));
    NodeId train =
        p.stage("train", online_mlp::training_step(acc, adam, kBatch, kDims, kClasses), {.acc = acc});
    losses.clear();
    NodeId progress = p.sink("progress", [&](const Tensors& t) { losses.push_back(t[0].data<float>()[0]); });
    p.connect(source, train);
    p.connect(train, progress);
    p.run();
  };
  Samples samples = interleave(state, python_trial(from_python, 1), timed(from_cpp, 1));
  if (losses.size() != kBatches) state.SkipWithError("the C++ pipeline lost batches");
  report_speedup("py_pipeline_mlp", samples, 0.95);
  Py_DECREF(from_python);
}
BENCHMARK(BM_py_pipeline_mlp)->Iterations(15)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
