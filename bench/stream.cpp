// What a stream adds to running its executable by hand:
//   stream_chunk_overhead  send + recv of a tiny chunk (add of f32[4] with a
//                          donated accumulator) minus the direct run of the
//                          same executable with the same donation, in us;
//   stream_fused_1MiB      1 MiB f32 chunks through the fused chain: a stream
//                          (send runs ahead of recv) vs a loop running the
//                          executable on each chunk and waiting for it.

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include <sluice/stream/stream.h>

namespace sluice::bench {
namespace {

void BM_stream_chunk_overhead(benchmark::State& state) {
  auto step = [](Expr x, Expr acc) { return tuple(x + acc, acc + 1); };
  Function f = trace({f32({4}), f32({4})}, step);
  Executable exe = compile(f, host());
  Stream s = stream(f, {f32({4})}, {zeros(f32({4}))});
  Tensor chunk = tensor<float>({1, 2, 3, 4});
  Tensor acc = zeros(f32({4}));
  float out[4];
  auto via_stream = [&] {
    s.send(chunk);
    s.recv()[0].copy_to_host(out);
  };
  auto direct = [&] {
    Tensors r = exe.run({chunk, acc}, {.donate = {1}});
    acc = r[1];
    r[0].copy_to_host(out);
  };
  constexpr int kCalls = 2000;
  Samples samples = interleave(state, timed(via_stream, kCalls), timed(direct, kCalls));
  double added_us = (median(samples.sluice) - median(samples.baseline)) * 1e6;
  report({.name = "stream_chunk_overhead",
          .sluice_s = median(samples.sluice),
          .baseline_s = median(samples.baseline),
          .value = added_us,
          .goal = 5.0,
          .better = Better::Lower,
          .unit = "us"});
  s.done();
}
BENCHMARK(BM_stream_chunk_overhead)->Iterations(21)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_stream_fused_1MiB(benchmark::State& state) {
  constexpr int64_t kN = 262144;  // 1 MiB of f32
  constexpr int kChunks = 64;
  Function f = trace({f32({kN})}, [](Expr x) { return tanh(x * 2 + 1) * x - exp(-x); });
  Executable exe = compile(f, host());
  std::vector<Tensor> chunks;
  for (int i = 0; i < kChunks; ++i)
    chunks.push_back(tensor(uniform_floats(kN, -2, 2, static_cast<unsigned>(i)), Shape{kN}));

  auto via_stream = [&] {
    Stream s = stream(f, {f32({kN})}, {});
    // Send runs two chunks ahead of recv: chunk k+1 is queued while k computes.
    for (int i = 0; i < kChunks; ++i) {
      s.send(chunks[static_cast<size_t>(i)]);
      if (i >= 2) s.recv();
    }
    for (int i = 0; i < 2; ++i) s.recv();
    s.done();
  };
  auto loop = [&] {
    for (const Tensor& c : chunks) exe.run({c})[0].wait();
  };
  report_speedup("stream_fused_1MiB", interleave(state, timed(via_stream), timed(loop)), 0.95);
}
BENCHMARK(BM_stream_fused_1MiB)->Iterations(15)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
