// sort of 1M f32 (one row) against std::sort of the same data. Like for
// like: each call of either side sorts a fresh copy of the same unsorted
// input into a buffer of its own. sluice sorts one long row with oneTBB's
// parallel_sort, so on two cores it should win.

#include <algorithm>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::bench {
namespace {

constexpr int64_t kLength = int64_t{1} << 20;

void BM_sort_1M_f32(benchmark::State& state) {
  const std::vector<float> x = uniform_floats(kLength, -1000, 1000, 5);
  std::vector<float> sorted(x.size());
  auto baseline = [&] {
    std::copy(x.begin(), x.end(), sorted.begin());
    std::sort(sorted.begin(), sorted.end());
  };
  baseline();

  Executable exe = compile(trace({f32({kLength})}, [](Expr v) { return sort(v); }), host());
  Tensor tx = tensor(x, Shape{kLength});
  Tensor y = exe.run({tx})[0];
  if (!check_close(state, y.data<float>(), sorted, 0)) return;

  Samples s = interleave(state, timed([&] { exe.run({tx})[0].wait(); }), timed(baseline));
  report_speedup("sort_1M_f32", s, 1.0);
}
BENCHMARK(BM_sort_1M_f32)->Iterations(21)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
