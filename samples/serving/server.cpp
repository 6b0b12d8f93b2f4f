// serving ENDPOINT [REQUESTS]: a compiled model served to many clients, as
// Nx.Serving does: each client sends single requests (one row of 16
// features) and gets its own reply (4 class probabilities); the server
// batches what comes in, up to 64 rows or 2 ms, and runs the model once per
// batch.
//
//   requests (ROUTER) ──> model (batched: 64 rows or 2 ms) ──> replies
//   one f32[16] each       dense 16->32, tanh, dense 32->4,     to each asker
//                          softmax: one compiled executable
//
// It serves until REQUESTS requests were answered (default: until
// interrupted), then prints per-request figures: queue wait, batch sizes,
// latency. samples/serving/client.py is a Python client that checks every
// reply against numpy.
//
//   build/samples/serving tcp://127.0.0.1:5590 3200 &
//   python3 samples/serving/client.py tcp://127.0.0.1:5590 32 100

#include <cmath>
#include <csignal>
#include <iostream>
#include <thread>

#include <fmt/core.h>

#include <sluice/devices/backend.h>
#include <sluice/ops/nn.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/serving.h>

namespace {

constexpr int64_t kFeatures = 16, kHidden = 32, kClasses = 4;

// The model's weights: fixed values a client can compute too (client.py).
std::vector<float> weights(int64_t rows, int64_t cols, double a, double b, double scale, bool cosine) {
  std::vector<float> w(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double x = a * static_cast<double>(i) + b * static_cast<double>(j);
      w[static_cast<size_t>(i * cols + j)] = static_cast<float>(scale * (cosine ? std::cos(x) : std::sin(x)));
    }
  return w;
}

sluice::Expr model(sluice::Expr x) {
  using sluice::constant;
  sluice::Expr w1 = constant(weights(kFeatures, kHidden, 0.7, 1.3, 0.3, false), {kFeatures, kHidden});
  sluice::Expr b1 = constant(weights(1, kHidden, 0.0, 1.0, 0.1, true), {kHidden});
  sluice::Expr w2 = constant(weights(kHidden, kClasses, 0.5, 0.9, 0.3, true), {kHidden, kClasses});
  sluice::Expr b2 = constant(weights(1, kClasses, 0.0, 0.05, 1.0, false), {kClasses});
  return sluice::softmax(sluice::dot(sluice::tanh(sluice::dot(x, w1) + b1), w2) + b2);
}

std::atomic<bool> interrupted{false};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: serving ENDPOINT [REQUESTS]\n";
    return 2;
  }
  const uint64_t wanted = argc == 3 ? std::stoull(argv[2]) : 0;
  std::signal(SIGINT, [](int) { interrupted = true; });
  std::signal(SIGTERM, [](int) { interrupted = true; });

  auto server = sluice::serving::endpoint(argv[1], {sluice::f32({kFeatures})});
  sluice::Pipeline p;
  // The function sees a whole batch, f32[64][16]: one executable, compiled once.
  auto scores = p.stage(
      "model", model,
      {.input = {sluice::f32({kFeatures})}, .batch = {.size = 64, .timeout = std::chrono::milliseconds(2)}});
  p.connect(p.source("requests", server->requests()), scores);
  p.connect(scores, p.sink("replies", server->replies()));
  p.start();
  std::cout << "serving on " << server->bound_endpoint() << std::endl;
  while (!interrupted && (wanted == 0 || server->metrics().replies + server->metrics().errors < wanted))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  server->stop();
  sluice::PipelineResult r = p.wait();

  const sluice::ServingMetrics m = server->metrics();
  const sluice::NodeMetrics& batching = r.metrics_of("model");
  std::cout << fmt::format("{} requests, {} replies, {} errors\n", m.requests, m.replies, m.errors)
            << fmt::format("  batches       {:.2f}, {:.2f} rows on average\n", batching.figures.at("batches"),
                           batching.figures.at("batch_size_mean"))
            << fmt::format(
                   "  queue wait    p50 {:.2f} ms, p99 {:.2f} ms (to the pipeline), batcher p50 {:.2f} ms, "
                   "p99 {:.2f} ms\n",
                   m.queue_wait_p50_us / 1e3, m.queue_wait_p99_us / 1e3,
                   batching.figures.at("queue_wait_p50_us") / 1e3,
                   batching.figures.at("queue_wait_p99_us") / 1e3)
            << fmt::format("  latency       p50 {:.2f} ms, p99 {:.2f} ms (request in to reply out)\n",
                           m.latency_p50_us / 1e3, m.latency_p99_us / 1e3);
  return m.errors == 0 && (wanted == 0 || m.replies >= wanted) ? 0 : 1;
}
