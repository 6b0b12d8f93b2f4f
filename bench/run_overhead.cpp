// The fixed cost of one run: a compiled add of two f32[4] tensors already on
// the host device, run and read back, per call. Nothing to compare with: the
// goal is absolute.

#include <array>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::bench {
namespace {

void BM_run_overhead_add4(benchmark::State& state) {
  Executable exe = compile(trace({f32({4}), f32({4})}, [](Expr a, Expr b) { return a + b; }), host());
  Tensor a = tensor<float>({1, 2, 3, 4}), b = tensor<float>({10, 20, 30, 40});
  std::array<float, 4> out{};
  auto run = [&] { exe.run({a, b})[0].copy_to_host(out.data()); };
  run();
  const std::array<float, 4> want{11, 22, 33, 44};
  if (!check_close(state, out, want, 0)) return;

  constexpr int kCallsPerRound = 1000;
  report_time_us("run_overhead_add4", measure(state, timed(run, kCallsPerRound)), 0.3);
}
BENCHMARK(BM_run_overhead_add4)->Iterations(31)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sluice::bench
