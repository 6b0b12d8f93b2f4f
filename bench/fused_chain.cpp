// The elementwise chain tanh(x * 2 + 1) * x - exp(-x) over 16M f32, compiled
// once by sluice and run repeatedly on a tensor already on the host device,
// against two baselines:
//   fused_chain_16M_f32   a hand-written fused loop on the same threads,
//                         built with -O3 -march=native -ffast-math;
//   fused_chain_vs_numpy  numpy evaluating the expression (timed inside
//                         Python with timeit; same inputs, same n, so the
//                         ratio of times per call is the ratio per element).

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include "bench/fused_chain_baseline.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::bench {
namespace {

constexpr int64_t kN = int64_t{1} << 24;

// x_i = i * 4 / n - 2: the same ramp over [-2, 2) the Python side makes.
std::vector<float> ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  const float step = 4.0f / static_cast<float>(n);
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i) * step - 2.0f;
  return v;
}

struct SluiceChain {
  Executable exe = compile(trace({f32({kN})}, [](Expr v) { return tanh(v * 2 + 1) * v - exp(-v); }), host());
  Tensor x = tensor(ramp(kN), Shape{kN});

  Tensor run() const { return exe.run({x})[0]; }
};

void BM_fused_chain_16M_f32(benchmark::State& state) {
  SluiceChain chain;
  const std::vector<float> x = ramp(kN);
  std::vector<float> y(x.size());
  fused_chain_baseline(x.data(), y.data(), x.size());
  if (!check_close(state, chain.run().data<float>(), y, 1e-4)) return;

  Samples s = interleave(state, timed([&] { chain.run().wait(); }),
                         timed([&] { fused_chain_baseline(x.data(), y.data(), x.size()); }));
  report_speedup("fused_chain_16M_f32", s, 0.9);
}
BENCHMARK(BM_fused_chain_16M_f32)->Iterations(21)->UseManualTime()->Unit(benchmark::kMillisecond);

// numpy's time per call, as the mean of `calls` timeit runs inside Python.
constexpr const char* kNumpyChain = R"(
import sys, timeit
import numpy as np
n, calls = int(sys.argv[1]), int(sys.argv[2])
x = np.arange(n, dtype=np.float32) * np.float32(4.0 / n) - np.float32(2)
f = lambda: np.tanh(x * 2 + 1) * x - np.exp(-x)
f()
print(sum(timeit.repeat(f, number=1, repeat=calls)) / calls)
)";

// The first of /usr/bin/python3 and the python3 on PATH that imports numpy.
std::optional<std::string> python_with_numpy() {
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    std::string probe = std::string(python) + " -c 'import numpy' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return python;
  }
  return std::nullopt;
}

double numpy_seconds_per_call(const std::string& python, int calls) {
  std::string command = python + " -c '" + kNumpyChain + "' " + std::to_string(kN) + " " + std::to_string(calls);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  double seconds = 0;
  if (!pipe || std::fscanf(pipe.get(), "%lf", &seconds) != 1)
    throw std::runtime_error("fused_chain_vs_numpy: no time from " + python);
  return seconds;
}

void BM_fused_chain_vs_numpy(benchmark::State& state) {
  std::optional<std::string> python = python_with_numpy();
  if (!python) {
    state.SkipWithError("no python3 with numpy: tried /usr/bin/python3 and python3 on PATH");
    return;
  }
  constexpr int kCalls = 3;
  SluiceChain chain;
  Samples s = interleave(state, timed([&] { chain.run().wait(); }, kCalls),
                         [&] { return numpy_seconds_per_call(*python, kCalls); });
  report_speedup("fused_chain_vs_numpy", s, 4.0);
}
BENCHMARK(BM_fused_chain_vs_numpy)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
