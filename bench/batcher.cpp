// Dynamic batching (StageOptions::batch) for small requests:
//   batcher_small_requests      32 closed-loop clients (each pushes one
//                               f32[16] request, waits for its own reply,
//                               then sends the next) through a small MLP
//                               (dense 16->64, tanh, dense 64->16), batched
//                               (size 64, timeout 2 ms) vs the same stage
//                               unbatched: the throughput ratio.
//   batcher_small_requests_p99_ms  the batched run's p99 request latency,
//                               judged against batch_timeout + 2 x one
//                               batch's compute time (measured by running the
//                               compiled function on a full batch).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <semaphore>
#include <thread>

#include "bench/bench_report.h"
#include "pipeline/pipeline.h"

namespace sluice::bench {
namespace {

using namespace std::chrono_literals;

constexpr int kClients = 32;
constexpr int kRequestsPerClient = 150;
constexpr int64_t kIn = 16, kHidden = 64, kBatch = 64;
constexpr auto kTimeout = 2ms;

Expr mlp(Expr x) {
  Expr w1 = constant(uniform_floats(kIn * kHidden, -0.25f, 0.25f, 1), Shape{kIn, kHidden});
  Expr b1 = constant(uniform_floats(kHidden, -0.1f, 0.1f, 2), Shape{kHidden});
  Expr w2 = constant(uniform_floats(kHidden * kIn, -0.25f, 0.25f, 3), Shape{kHidden, kIn});
  Expr b2 = constant(uniform_floats(kIn, -0.1f, 0.1f, 4), Shape{kIn});
  return dot(tanh(dot(x, w1) + b1), w2) + b2;
}

// One round: every client sends its requests one at a time. Returns the
// seconds from the first request to the last reply; adds each request's
// latency (push to its reply) to `latencies`.
double serve(const Function& f, const StageOptions& options, std::vector<double>* latencies) {
  auto requests = sources::push({f32({kIn})});
  Pipeline p;
  auto in = p.source("requests", requests);
  auto st = p.stage("mlp", f, options);
  p.connect(in, st);
  p.connect(st, p.sink("replies", [](const Tensor& t) { benchmark::DoNotOptimize(t.host_data()); }));
  p.start();
  std::vector<std::vector<double>> seen(kClients);
  std::vector<std::thread> clients;
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      Tensor x = tensor(uniform_floats(kIn, -1, 1, static_cast<unsigned>(c)), Shape{kIn});
      std::binary_semaphore replied(0);
      for (int i = 0; i < kRequestsPerClient; ++i) {
        const auto sent = std::chrono::steady_clock::now();
        // The reply is in the sink once the pipeline is done with the request.
        requests->push({x}, [&replied](bool) { replied.release(); });
        replied.acquire();
        seen[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count());
      }
    });
  }
  for (auto& t : clients) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  requests->close();
  p.wait();
  if (latencies)
    for (const auto& s : seen) latencies->insert(latencies->end(), s.begin(), s.end());
  return seconds;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

void BM_batcher_small_requests(benchmark::State& state) {
  Function one = trace({f32({kIn})}, mlp);
  Function batch = trace({f32({kBatch, kIn})}, mlp);
  const StageOptions batched{.input = {f32({kIn})}, .batch = {.size = kBatch, .timeout = kTimeout}};
  const StageOptions unbatched{.input = {f32({kIn})}, .concurrency = kClients};

  // One batch's compute time: the compiled function on a full batch.
  Executable exe = compile(batch, host());
  Tensor full = tensor(uniform_floats(kBatch * kIn, -1, 1, 5), Shape{kBatch, kIn});
  std::vector<double> compute;
  for (int i = 0; i < 200; ++i) {
    const auto start = std::chrono::steady_clock::now();
    exe.run({full})[0].wait();
    compute.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const double batch_compute_s = median(compute);

  std::vector<double> latencies;
  int rounds = 0;  // the first, untimed, is left out of the latencies too
  Samples s = interleave(
      state, [&] { return serve(batch, batched, rounds++ > 0 ? &latencies : nullptr); },
      [&] { return serve(one, unbatched, nullptr); });
  report_speedup("batcher_small_requests", s, 5.0);

  const double p99 = percentile(latencies, 0.99);
  const double bound = std::chrono::duration<double>(kTimeout).count() + 2 * batch_compute_s;
  std::printf(
      "batcher_small_requests: p99 latency %.3f ms (p50 %.3f ms), bound timeout + 2 x batch compute = "
      "%.3f ms (one batch of %lld computes in %.1f us)\n",
      p99 * 1e3, percentile(latencies, 0.5) * 1e3, bound * 1e3, static_cast<long long>(kBatch),
      batch_compute_s * 1e6);
  report({.name = "batcher_small_requests_p99_ms",
          .sluice_s = p99,
          .baseline_s = std::nullopt,
          .value = p99 * 1e3,
          .goal = bound * 1e3,
          .better = Better::Lower,
          .unit = "ms"});
  state.counters["p99_ms"] = p99 * 1e3;
  state.counters["bound_ms"] = bound * 1e3;
}
BENCHMARK(BM_batcher_small_requests)->Iterations(7)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
