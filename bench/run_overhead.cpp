// What one run costs beyond its arithmetic, per call:
//   run_overhead_add4   a compiled add of two f32[4] tensors already on the
//                       host device, run and read back. Nothing to compare
//                       with: the goal is absolute.
//   run_handoff_64KiB   a compiled add of two f32[16384] tensors (64 KiB
//                       each), run and waited on, one call after another:
//                       large enough to go to the CPU backend's runners, so
//                       each call is a hand-off to another thread. Against
//                       the same add as a loop on the calling thread into
//                       memory of its own: a runner that parks between
//                       calls costs a wake-up (tens of microseconds) a call.

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

void BM_run_handoff_64KiB(benchmark::State& state) {
  constexpr size_t kN = 16384;
  Executable exe = compile(trace({f32({kN}), f32({kN})}, [](Expr a, Expr b) { return a + b; }), host());
  const std::vector<float> a = uniform_floats(kN, -1, 1, 1), b = uniform_floats(kN, -1, 1, 2);
  const Tensor ta = tensor(a, Shape{kN}), tb = tensor(b, Shape{kN});
  std::vector<float> out(kN);
  Tensor result;
  auto run = [&] {
    result = exe.run({ta, tb})[0];
    result.wait();
  };
  auto loop = [&] {
    const float* __restrict x = a.data();
    const float* __restrict y = b.data();
    float* __restrict z = out.data();
    for (size_t i = 0; i < kN; ++i) z[i] = x[i] + y[i];
    benchmark::DoNotOptimize(z);
  };
  run();
  loop();
  if (!check_close(state, result.to_vector<float>(), out, 0)) return;

  constexpr int kCallsPerRound = 500;
  report_speedup("run_handoff_64KiB",
                 interleave(state, timed(run, kCallsPerRound), timed(loop, kCallsPerRound)), 0.4);
}
BENCHMARK(BM_run_handoff_64KiB)->Iterations(21)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sluice::bench
