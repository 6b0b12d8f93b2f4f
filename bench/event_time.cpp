// Event time (pipeline/event_time.h) against numpy.
//   zip_by_time_2x  two 16 kHz streams of 8 f32 channels (10 s each, in
//                   chunks of 100 ms; B on its own clock, 50 ppm fast, each
//                   chunk's stamp off by up to 10 us) aligned by a pipeline
//                   of two sources, zip_by_time and a sink, against numpy's
//                   searchsorted alignment of the same samples
//                   (bench/event_time_numpy.py, in the Python embedded
//                   here: Debian's, where python3-numpy is). Ratio numpy /
//                   sluice, goal >= 5. Both outputs are checked equal first.

#include <Python.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <sluice/pipeline/pipeline.h>

#include "bench/bench_report.h"

namespace sluice::bench {
namespace {

constexpr double kRate = 16000;
constexpr int64_t kChannels = 8, kRows = 1600, kChunks = 100;
constexpr int64_t kTolerance = 31'250;  // half a sample

struct Streams {
  std::vector<Chunk> a, b;
  std::vector<int64_t> a_times, b_times;  // every sample's, for numpy
  std::vector<float> b_data;
};

Streams make_streams() {
  Streams s;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1, 1);
  std::uniform_int_distribution<int64_t> jitter(-10'000, 10'000);
  for (int64_t c = 0; c < kChunks; ++c) {
    for (int which = 0; which < 2; ++which) {
      // B's clock runs 50 ppm fast and 1.7 ms behind.
      const double rate = which == 0 ? kRate : kRate * (1 + 50e-6);
      const int64_t t0 =
          which == 0 ? c * 100'000'000 : 1'700'000 + row_offset_ns(c * kRows, rate) + jitter(rng);
      std::vector<float> x(static_cast<size_t>(kRows * kChannels));
      for (float& v : x) v = value(rng);
      Chunk chunk{{tensor(x, {kRows, kChannels})}, {}};
      chunk.tags.set_time(t0, which == 0 ? "a" : "b");
      chunk.tags.set_sample_rate(rate);
      std::vector<int64_t>& times = which == 0 ? s.a_times : s.b_times;
      for (int64_t r = 0; r < kRows; ++r) times.push_back(t0 + row_offset_ns(r, rate));
      if (which == 1) s.b_data.insert(s.b_data.end(), x.begin(), x.end());
      (which == 0 ? s.a : s.b).push_back(std::move(chunk));
    }
  }
  return s;
}

std::shared_ptr<Source> replay(const std::vector<Chunk>& chunks) {
  return sources::indexed({f32({kRows, kChannels})}, [&chunks](uint64_t i) -> std::optional<Chunk> {
    if (i >= chunks.size()) return std::nullopt;
    return chunks[i];
  });
}

// Runs the pipeline; `out` and `matched`, when given, get B's aligned rows.
void zip(const Streams& s, std::vector<float>* out = nullptr, std::vector<uint8_t>* matched = nullptr) {
  Pipeline p;
  auto a = p.source("a", replay(s.a));
  auto b = p.source("b", replay(s.b));
  // Replayed as fast as they can be read, the streams are as far apart in
  // event time as the threads make them: the zip waits for B however far
  // behind (an hour), as it would for a recording.
  auto joined = p.zip_by_time(
      "joined", {.tolerance = std::chrono::nanoseconds(kTolerance), .lateness = std::chrono::hours(1)});
  p.connect(a, joined);
  p.connect(b, joined);
  p.connect(joined, p.sink("rows", [out, matched](const Tensors& t) {
    if (!out) return;
    std::vector<float> x = t[1].to_vector<float>();
    out->insert(out->end(), x.begin(), x.end());
    for (bool m : t[2].to_vector<bool>()) matched->push_back(m);
  }));
  p.run();
}

PyObject* numpy_baseline() {
  static PyObject* module = [] {
    Py_Initialize();
    PyRun_SimpleString("import sys; sys.path.insert(0, '" SLUICE_SOURCE_DIR "/bench')");
    PyObject* m = PyImport_ImportModule("event_time_numpy");
    if (!m) {
      PyErr_Print();
      throw std::runtime_error("cannot import bench/event_time_numpy.py (numpy: python3-numpy)");
    }
    return m;
  }();
  return module;
}

template <typename T>
PyObject* bytes_of(const std::vector<T>& v) {
  return PyBytes_FromStringAndSize(reinterpret_cast<const char*>(v.data()),
                                   static_cast<Py_ssize_t>(v.size() * sizeof(T)));
}

template <typename T>
std::vector<T> from_bytes(PyObject* b) {
  std::vector<T> v(static_cast<size_t>(PyBytes_Size(b)) / sizeof(T));
  std::memcpy(v.data(), PyBytes_AsString(b), v.size() * sizeof(T));
  return v;
}

void BM_zip_by_time_2x(benchmark::State& state) {
  const Streams s = make_streams();
  PyObject* setup = PyObject_CallMethod(numpy_baseline(), "setup", "NNNLL", bytes_of(s.a_times),
                                        bytes_of(s.b_times), bytes_of(s.b_data), kChannels, kTolerance);
  if (!setup) {
    PyErr_Print();
    state.SkipWithError("bench/event_time_numpy.py: setup failed");
    return;
  }
  std::vector<float> out;
  std::vector<uint8_t> matched;
  zip(s, &out, &matched);
  if (out != from_bytes<float>(PyTuple_GetItem(setup, 1)) ||
      matched != from_bytes<uint8_t>(PyTuple_GetItem(setup, 2))) {
    state.SkipWithError("zip_by_time and numpy disagree");
    Py_DECREF(setup);
    return;
  }
  PyObject* trial = PyTuple_GetItem(setup, 0);
  Samples samples = interleave(state, timed([&] { zip(s); }), [trial] {
    PyObject* r = PyObject_CallNoArgs(trial);
    if (!r) {
      PyErr_Print();
      throw std::runtime_error("bench/event_time_numpy.py: the trial failed");
    }
    const double seconds = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return seconds;
  });
  report_speedup("zip_by_time_2x", samples, 5);
  Py_DECREF(setup);
}
BENCHMARK(BM_zip_by_time_2x)->Iterations(15)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
