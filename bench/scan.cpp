// What a compiled loop saves over running a step function once per step:
//   scan_steps_1024  1,024 steps of a running sum over f32[1024] rows (carry
//                    + x_i) in one `scan`, against 1,024 Executable::run
//                    calls of the step function with the accumulator donated
//                    (the rows prepared as separate tensors beforehand).

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::bench {
namespace {

void BM_scan_steps_1024(benchmark::State& state) {
  constexpr int64_t kSteps = 1024, kN = 1024;
  Executable looped = compile(trace({f32({kSteps, kN}), f32({kN})}, [](Expr xs, Expr init) {
    return scan([](Expr c, Expr x) { return c + x; }, init, xs);
  }));
  Executable step = compile(trace({f32({kN}), f32({kN})}, [](Expr x, Expr acc) { return acc + x; }));
  const std::vector<float> data = uniform_floats(static_cast<size_t>(kSteps * kN), -1, 1, 7);
  const Tensor xs = tensor(data, Shape{kSteps, kN});
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < kSteps; ++i)
    rows.push_back(tensor(std::vector<float>(data.begin() + i * kN, data.begin() + (i + 1) * kN), Shape{kN}));

  Tensor scan_acc = zeros(f32({kN})), step_acc = zeros(f32({kN}));
  auto via_scan = [&] {
    scan_acc = looped.run({xs, scan_acc}, {.donate = {1}})[0];
    scan_acc.wait();
  };
  auto via_runs = [&] {
    for (const Tensor& x : rows) step_acc = step.run({x, step_acc}, {.donate = {1}})[0];
    step_acc.wait();
  };
  via_scan();
  via_runs();
  if (!check_close(state, scan_acc.to_vector<float>(), step_acc.to_vector<float>(), 0)) return;
  report_speedup("scan_steps_1024", interleave(state, timed(via_scan), timed(via_runs)), 2.0);
}
BENCHMARK(BM_scan_steps_1024)->Iterations(31)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sluice::bench
