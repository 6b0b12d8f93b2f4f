// Dynamic batching (StageOptions::batch) for small requests:
//   batcher_small_requests      32 clients, each keeping 4 requests of
//                               f32[16] (64 bytes) in flight (a request goes
//                               as soon as one of its replies came back),
//                               through an MLP whose cost per call is reading
//                               its 4 MiB of weights (dense 16->1024, tanh,
//                               dense 1024->1024, tanh, dense 1024->16): the
//                               case batching is for, since a batch of 64
//                               reads them once for 64 requests. Batched
//                               (size 64, timeout 2 ms) vs the same stage
//                               unbatched: the throughput ratio. (With a model
//                               of a few microseconds a call there is nothing
//                               to save: the pipeline's own cost per message
//                               is the same either way.)
//   batcher_small_requests_p99_ms  the batched run's p99 request latency,
//                               judged against batch_timeout + 2 x one
//                               batch's compute time (measured by running the
//                               compiled function on a full batch).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <semaphore>
#include <thread>

#include "bench/bench_report.h"
#include <sluice/pipeline/pipeline.h>

namespace sluice::bench {
namespace {

using namespace std::chrono_literals;

constexpr int kClients = 32, kInFlight = 4;
constexpr int kRequestsPerClient = 48;
constexpr int64_t kIn = 16, kHidden = 1024, kBatch = 64;
constexpr auto kTimeout = 2ms;

Expr mlp(Expr x) {
  Expr w1 = constant(uniform_floats(kIn * kHidden, -0.25f, 0.25f, 1), Shape{kIn, kHidden});
  Expr b1 = constant(uniform_floats(kHidden, -0.1f, 0.1f, 2), Shape{kHidden});
  Expr w2 = constant(uniform_floats(kHidden * kHidden, -0.03f, 0.03f, 3), Shape{kHidden, kHidden});
  Expr w3 = constant(uniform_floats(kHidden * kIn, -0.03f, 0.03f, 4), Shape{kHidden, kIn});
  Expr b3 = constant(uniform_floats(kIn, -0.1f, 0.1f, 5), Shape{kIn});
  return dot(tanh(dot(tanh(dot(x, w1) + b1), w2)), w3) + b3;
}

// One round: every client sends its requests, kInFlight at a time. Returns
// the seconds from the first request to the last reply; adds each
// request's latency (push to its reply) to `latencies`.
double serve(const Function& f, const StageOptions& options, std::vector<double>* latencies,
             std::map<std::string, double>* figures = nullptr) {
  auto requests = sources::push({f32({kIn})});
  // Room for two batches in the pipeline at once: one running, the next filling.
  Pipeline p({.capacity = 2 * kBatch});
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
      std::counting_semaphore<kInFlight> room(kInFlight);
      std::mutex mutex;
      std::vector<double>& mine = seen[static_cast<size_t>(c)];
      for (int i = 0; i < kRequestsPerClient; ++i) {
        room.acquire();
        const auto sent = std::chrono::steady_clock::now();
        // The reply is in the sink once the pipeline is done with the request.
        requests->push({x}, [&room, &mutex, &mine, sent](bool) {
          {
            std::lock_guard lock(mutex);
            mine.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count());
          }
          room.release();
        });
      }
      for (int k = 0; k < kInFlight; ++k) room.acquire();
    });
  }
  for (auto& t : clients) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  requests->close();
  PipelineResult r = p.wait();
  if (figures) *figures = r.metrics_of("mlp").figures;
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
  std::map<std::string, double> figures;  // the batcher's, last round
  int rounds = 0;  // the first, untimed, is left out of the latencies too
  Samples s = interleave(
      state, [&] { return serve(batch, batched, rounds++ > 0 ? &latencies : nullptr, &figures); },
      [&] { return serve(one, unbatched, nullptr); });
  report_speedup("batcher_small_requests", s, 5.0);

  const double p99 = percentile(latencies, 0.99);
  const double bound = std::chrono::duration<double>(kTimeout).count() + 2 * batch_compute_s;
  std::printf(
      "batcher_small_requests: p99 latency %.3f ms (p50 %.3f ms), bound timeout + 2 x batch compute = "
      "%.3f ms (one batch of %lld computes in %.1f us); batches of %.1f rows on average, %.0f of %.0f "
      "flushed "
      "by the timeout\n",
      p99 * 1e3, percentile(latencies, 0.5) * 1e3, bound * 1e3, static_cast<long long>(kBatch),
      batch_compute_s * 1e6, figures["batch_size_mean"], figures["timeouts"], figures["batches"]);
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
