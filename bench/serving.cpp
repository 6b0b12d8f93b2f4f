// Serving small requests with dynamic batching (StageOptions::batch),
// measured through the serving endpoint, its clients in processes of their
// own (two C++ processes, bench_serving_client, and a Python one,
// serving_load.py, when a python3 with numpy and pyzmq is there):
//   serving_small_requests   32 clients, each keeping 4 requests of f32[16]
//                            (64 bytes) in flight (a request goes as soon as
//                            one of its replies came back), through an MLP
//                            whose cost per call is reading its 4 MiB of
//                            weights (dense 16->1024, tanh, dense
//                            1024->1024, tanh, dense 1024->16): the case
//                            batching is for, since a batch of 64 reads them
//                            once for 64 requests. Batched (size 64, timeout
//                            2 ms) vs the same stage unbatched: the
//                            throughput ratio, requests over the time from
//                            the clients' common start to the last reply.
//                            (With a model of a few microseconds a call there
//                            is nothing to save.)
//   serving_p99_ms           the batched run's p99 request latency as the
//                            clients see it (send to reply, the endpoint's
//                            socket and the pipeline included), judged
//                            against batch_timeout + 2 x one batch's compute
//                            time (measured by running the compiled function
//                            on a full batch).

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/serving.h>
#include "bench/bench_report.h"
#include "bench/child_process.h"

namespace sluice::bench {
namespace {

using namespace std::chrono_literals;

// 32 clients: 14 in each of two C++ processes and 4 in a Python one (28
// and 0 without Python, then 16 in each C++ one).
constexpr int kCppProcesses = 2, kPythonClients = 4, kClients = 32, kInFlight = 4;
constexpr int kRequestsPerClient = 48;
constexpr int64_t kIn = 16, kHidden = 1024, kBatch = 64;
constexpr auto kTimeout = 2ms;
// The clients start together this long after they are launched (Python's
// imports take a few hundred milliseconds).
constexpr auto kStartAfter = 1500ms;

Expr mlp(Expr x) {
  Expr w1 = constant(uniform_floats(kIn * kHidden, -0.25f, 0.25f, 1), Shape{kIn, kHidden});
  Expr b1 = constant(uniform_floats(kHidden, -0.1f, 0.1f, 2), Shape{kHidden});
  Expr w2 = constant(uniform_floats(kHidden * kHidden, -0.03f, 0.03f, 3), Shape{kHidden, kHidden});
  Expr w3 = constant(uniform_floats(kHidden * kIn, -0.03f, 0.03f, 4), Shape{kHidden, kIn});
  Expr b3 = constant(uniform_floats(kIn, -0.1f, 0.1f, 5), Shape{kIn});
  return dot(tanh(dot(tanh(dot(x, w1) + b1), w2)), w3) + b3;
}

// Whether /usr/bin/python3 has numpy and pyzmq (Debian's python3-numpy and python3-zmq).
bool python_clients_possible() {
  static const bool possible = [] {
    ChildProcess probe({"/usr/bin/python3", "-c", "import numpy, zmq"}, false);
    return probe.succeeded();
  }();
  return possible;
}

// What a client process wrote: its last reply's time, then its latencies.
double read_client_file(const std::string& path, std::vector<double>* latencies) {
  std::ifstream in(path);
  double end = 0;
  if (!(in >> end)) throw std::runtime_error("no results in " + path);
  for (double s; in >> s;)
    if (latencies) latencies->push_back(s);
  std::filesystem::remove(path);
  return end;
}

// One round: the endpoint in front of a pipeline running `f` with
// `options`, and the client processes. Returns the seconds from the
// clients' common start to the last reply; adds each request's latency to
// `latencies`. The requests answered, in *answered.
double serve(const Function& f, const StageOptions& options, std::vector<double>* latencies,
             std::map<std::string, double>* figures, uint64_t* answered) {
  static int round = 0;
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string name = "sluice-bench-serving-" + std::to_string(getpid()) + "-" + std::to_string(++round);
  auto server = serving::endpoint("@ipc://" + (dir / name).string(), {f32({kIn})});
  // Room for two batches in the pipeline at once: one running, the next filling.
  Pipeline p({.capacity = 2 * kBatch});
  auto st = p.stage("mlp", f, options);
  p.connect(p.source("requests", server->requests()), st);
  p.connect(st, p.sink("replies", server->replies()));
  p.start();
  const bool python = python_clients_possible();
  const int cpp_clients = (kClients - (python ? kPythonClients : 0)) / kCppProcesses;
  const double go =
      std::chrono::duration<double>((std::chrono::steady_clock::now() + kStartAfter).time_since_epoch())
          .count();
  const std::string go_text = fmt::format("{:.6f}", go);
  std::vector<std::string> outputs;
  std::vector<std::unique_ptr<ChildProcess>> clients;
  auto start = [&](std::vector<std::string> argv) {
    outputs.push_back((dir / (name + "-" + std::to_string(outputs.size()))).string());
    argv.insert(argv.end(), {server->bound_endpoint(), "", std::to_string(kInFlight),
                             std::to_string(kRequestsPerClient), go_text, outputs.back()});
    return argv;
  };
  for (int k = 0; k < kCppProcesses; ++k) {
    std::vector<std::string> argv = start({sibling_program("bench_serving_client")});
    argv[2] = std::to_string(cpp_clients);
    clients.push_back(std::make_unique<ChildProcess>(argv, false));
  }
  if (python) {
    std::vector<std::string> argv = start({"/usr/bin/python3", SLUICE_SOURCE_DIR "/bench/serving_load.py"});
    argv[3] = std::to_string(kPythonClients);
    clients.push_back(std::make_unique<ChildProcess>(argv, false));
  }
  bool all = true;
  for (auto& c : clients) all = c->succeeded() && all;
  server->stop();
  PipelineResult r = p.wait();
  if (!all) throw std::runtime_error("a client process failed (its stderr is above)");
  double last = go;
  for (const std::string& o : outputs) last = std::max(last, read_client_file(o, latencies));
  if (figures) *figures = r.metrics_of("mlp").figures;
  // A batch's time in the run, against its compute alone: what the other processes' load costs it.
  if (figures) (*figures)["busy_s"] = r.metrics_of("mlp").busy_seconds;
  *answered = r.metrics_of("mlp").messages_out;
  return last - go;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

void BM_serving_small_requests(benchmark::State& state) {
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
  uint64_t answered = 0, expected = static_cast<uint64_t>(kClients) * kRequestsPerClient;
  int rounds = 0;  // the first, untimed, is left out of the latencies too
  try {
    // Seconds a request, so that the ratio is of throughputs.
    Samples s = interleave(
        state,
        [&] {
          const double seconds =
              serve(batch, batched, rounds++ > 0 ? &latencies : nullptr, &figures, &answered);
          if (answered != expected)
            throw std::runtime_error(fmt::format("batched: {} of {} requests answered", answered, expected));
          return seconds / static_cast<double>(answered);
        },
        [&] {
          const double seconds = serve(one, unbatched, nullptr, nullptr, &answered);
          if (answered != expected)
            throw std::runtime_error(
                fmt::format("unbatched: {} of {} requests answered", answered, expected));
          return seconds / static_cast<double>(answered);
        });
    report_speedup("serving_small_requests", s, 5.0);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }

  const double p99 = percentile(latencies, 0.99);
  const double bound = std::chrono::duration<double>(kTimeout).count() + 2 * batch_compute_s;
  std::printf(
      "serving_small_requests: clients in %d C++ processes%s; p99 latency %.3f ms (p50 %.3f ms), "
      "bound timeout + 2 x batch compute = %.3f ms (one batch of %lld computes in %.1f us); "
      "batches of %.1f rows on average, %.0f of %.0f flushed by the timeout, each run in %.1f us\n",
      kCppProcesses, python_clients_possible() ? " and a Python one" : " (no python3 with numpy and pyzmq)",
      p99 * 1e3, percentile(latencies, 0.5) * 1e3, bound * 1e3, static_cast<long long>(kBatch),
      batch_compute_s * 1e6, figures["batch_size_mean"], figures["timeouts"], figures["batches"],
      figures["batches"] > 0 ? figures["busy_s"] / figures["batches"] * 1e6 : 0.0);
  report({.name = "serving_p99_ms",
          .sluice_s = p99,
          .baseline_s = std::nullopt,
          .value = p99 * 1e3,
          .goal = bound * 1e3,
          .better = Better::Lower,
          .unit = "ms"});
  state.counters["p99_ms"] = p99 * 1e3;
  state.counters["bound_ms"] = bound * 1e3;
}
BENCHMARK(BM_serving_small_requests)->Iterations(7)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
