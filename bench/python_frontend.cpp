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
// The extension holds a copy of sluice of its own; the C++ baseline runs on
// this program's, each with its own host pool (idle while the other runs).

#include <Python.h>

#include <stdexcept>
#include <string>

#include <benchmark/benchmark.h>

#include <sluice/stream/stream.h>
#include "bench/bench_report.h"

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
PyObject* setup(const char* name) {
  PyObject* trials = PyObject_CallMethod(frontend(), name, nullptr);
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

}  // namespace
}  // namespace sluice::bench
