// block_softmax: softmax along rows of 1,024 f32 (1,024 rows, 4 MiB), the
// block "softmax" as the host runs it (its native kernel: one pass per row
// held in cache) against the block's fallback traced as ops
// (softmax_as_ops: max, exp, sum and divide over the whole tensor), both
// compiled for the host as a user gets them.

#include <benchmark/benchmark.h>

#include <sluice/devices/backend.h>
#include <sluice/ops/nn.h>
#include <sluice/ops/ops.h>
#include "bench/bench_report.h"

namespace sluice::bench {
namespace {

constexpr int64_t kRows = 1024, kRow = 1024;

void BM_block_softmax(benchmark::State& state) {
  const Spec spec = f32({kRows, kRow});
  Executable native = compile(trace({spec}, [](Expr x) { return softmax(x); }), host());
  Executable fallback = compile(trace({spec}, [](Expr x) { return softmax_as_ops(x); }), host());
  const Tensor x = tensor(uniform_floats(static_cast<size_t>(kRows * kRow), -8, 8, 5), spec.shape);
  if (!check_close(state, native.run({x})[0].data<float>(), fallback.run({x})[0].data<float>(), 1e-6)) return;
  Samples s = interleave(state, timed([&] { native.run({x})[0].wait(); }),
                         timed([&] { fallback.run({x})[0].wait(); }));
  report_speedup("block_softmax", s, 1.2);
}
BENCHMARK(BM_block_softmax)->Iterations(41)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sluice::bench
