// take of 64K rows of 256 f32 from a 1M-row table (1 GiB) by random
// indices, against a hand-written loop copying the same rows into a buffer
// it keeps. sluice's gather copies each row with one memcpy, rows spread
// over oneTBB's threads.

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include <sluice/devices/backend.h>
#include <sluice/ops/ops.h>

namespace sluice::bench {
namespace {

constexpr int64_t kTableRows = int64_t{1} << 20;
constexpr int64_t kRowLength = 256;
constexpr int64_t kPicked = int64_t{1} << 16;

void BM_gather_rows_f32(benchmark::State& state) {
  auto table = std::make_shared<std::vector<float>>(
      uniform_floats(static_cast<size_t>(kTableRows * kRowLength), -1, 1, 9));
  std::vector<int32_t> rows(kPicked);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(kTableRows - 1));
  for (int32_t& r : rows) r = pick(rng);

  std::vector<float> picked(static_cast<size_t>(kPicked * kRowLength));
  auto baseline = [&] {
    const float* from = table->data();
    float* to = picked.data();
    for (int64_t i = 0; i < kPicked; ++i)
      std::memcpy(to + i * kRowLength, from + rows[static_cast<size_t>(i)] * kRowLength, kRowLength * sizeof(float));
  };
  baseline();

  Executable exe = compile(trace({f32({kTableRows, kRowLength}), s32({kPicked})},
                                 [](Expr t, Expr i) { return take(t, i, 0); }),
                           host());
  Tensor tt = wrap_host(f32({kTableRows, kRowLength}), table->data(), table);
  Tensor ti = tensor(rows, Shape{kPicked});
  Tensor y = exe.run({tt, ti})[0];
  if (!check_close(state, y.data<float>(), picked, 0)) return;

  Samples s = interleave(state, timed([&] { exe.run({tt, ti})[0].wait(); }), timed(baseline));
  report_speedup("gather_rows_f32", s, 0.9);
}
BENCHMARK(BM_gather_rows_f32)->Iterations(21)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
