// What serving metrics costs a pipeline:
//   metrics_overhead  pipeline_overhead_4stage's pipeline (4 tiny compiled
//                     stages, bench/pipeline.cpp) with its metrics served
//                     over HTTP and scraped every 100 ms by a client
//                     thread, vs the same pipeline with metrics off.
//                     Reported as off time / served time: 1 is free.
// Runs are 20000 messages long (a few scrapes each), not 2000.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <benchmark/benchmark.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include <sluice/pipeline/pipeline.h>
#include "bench/bench_report.h"
#include "bench/four_stages.h"

namespace sluice::bench {
namespace {

constexpr int kMessages = 20000;

// A port free now, so that every served run binds the same one and the
// scraper knows where to look.
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("metrics_overhead: no free port");
  close(fd);
  return ntohs(addr.sin_port);
}

// Scrapes /metrics every 100 ms while it lives, counting the answers (runs
// with metrics off, and the moments between runs, answer nothing).
class Scraper {
 public:
  explicit Scraper(int port)
      : thread_([this, port] {
          while (!done_.load()) {
            httplib::Client client("127.0.0.1", port);
            client.set_connection_timeout(1);
            if (httplib::Result r = client.Get("/metrics"); r && r->status == 200) scrapes_.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
        }) {}
  ~Scraper() {
    done_.store(true);
    thread_.join();
  }
  Scraper(const Scraper&) = delete;
  Scraper& operator=(const Scraper&) = delete;
  int scrapes() const { return scrapes_.load(); }

 private:
  std::atomic<bool> done_{false};
  std::atomic<int> scrapes_{0};
  std::thread thread_;
};

void BM_metrics_overhead(benchmark::State& state) {
  Function add1 = trace({f32({4})}, [](Expr x) { return x + 1; });
  Tensor x = tensor<float>({1, 2, 3, 4});
  const int port = free_port();

  auto run = [&](int metrics_port) {
    run_four_stages(add1, sources::list(std::vector<Tensor>(kMessages, x)), {.metrics_port = metrics_port});
  };
  Scraper scraper(port);
  Samples s = interleave(state, timed([&] { run(port); }), timed([&] { run(0); }));
  state.counters["scrapes"] = scraper.scrapes();
  if (scraper.scrapes() == 0) {
    state.SkipWithError("no scrape was answered");
    return;
  }
  report_speedup("metrics_overhead", s, 0.95);
}
BENCHMARK(BM_metrics_overhead)->Iterations(31)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
