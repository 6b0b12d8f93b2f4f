// Metrics served over HTTP while a pipeline runs (PipelineOptions::metrics_port),
// scraped with cpp-httplib's client as Prometheus would.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include <sluice/pipeline/pipeline.h>
#include "tests/pipeline/slow_counter.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

struct Page {
  int status = 0;
  std::string content_type, body;
};
Page get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  client.set_read_timeout(2);
  httplib::Result r = client.Get(path.c_str());
  if (!r) return {};
  return {r->status, r->get_header_value("Content-Type"), r->body};
}

// The value of the sample whose name and labels are exactly `series`; -1 when absent.
double sample(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

// A source, a stage and a sink, slow enough (about 1.5 s) to scrape mid-run.
struct SlowPipeline {
  Pipeline p;
  explicit SlowPipeline(PipelineOptions o, int64_t messages = 300) : p(o) {
    auto src = p.source("numbers", slow_counter(messages, milliseconds(5)));
    auto sq = p.stage("square", [](Expr x) { return x * x; }, {.input = {s64()}});
    auto sink = p.sink("drop", [](const Tensor&) {});
    p.connect(src, sq);
    p.connect(sq, sink);
  }
};

TEST(MetricsHttp, ServesPrometheusTextAndJsonWhileRunning) {
  SlowPipeline s({.name = "scraped", .metrics_port = -1});
  s.p.start();
  const int port = s.p.metrics_port();
  ASSERT_GT(port, 0);
  const std::string out =
      R"(sluice_node_messages_total{pipeline="scraped",node="square",kind="stage",direction="out"})";
  std::this_thread::sleep_for(milliseconds(300));
  Page first = get(port, "/metrics");
  std::this_thread::sleep_for(milliseconds(300));
  Page second = get(port, "/metrics");
  ASSERT_EQ(first.status, 200);
  ASSERT_EQ(second.status, 200);
  EXPECT_EQ(first.content_type, "text/plain; version=0.0.4; charset=utf-8");
  for (const char* family : {"sluice_node_messages_total counter", "sluice_node_bytes_total counter",
                             "sluice_node_errors_total counter", "sluice_node_skipped_total counter",
                             "sluice_node_busy_seconds_total counter", "sluice_node_queue_depth gauge",
                             "sluice_node_latency_seconds histogram", "sluice_node_figure gauge"})
    EXPECT_NE(first.body.find(std::string("# TYPE ") + family + "\n"), std::string::npos) << family;
  for (const char* node :
       {R"(node="numbers",kind="source")", R"(node="square",kind="stage")", R"(node="drop",kind="sink")"})
    EXPECT_NE(first.body.find(node), std::string::npos) << node;
  // Counters grow between scrapes while the run goes on.
  const double before = sample(first.body, out), after = sample(second.body, out);
  EXPECT_GT(before, 0) << first.body;
  EXPECT_GT(after, before);
  const std::string latency_count =
      R"(sluice_node_latency_seconds_count{pipeline="scraped",node="drop",kind="sink"})";
  const std::string latency_inf =
      R"(sluice_node_latency_seconds_bucket{pipeline="scraped",node="drop",kind="sink",le="+Inf"})";
  EXPECT_EQ(sample(second.body, latency_count), sample(second.body, latency_inf));

  Page json = get(port, "/metrics.json");
  ASSERT_EQ(json.status, 200);
  EXPECT_EQ(json.content_type, "application/json");
  nlohmann::json nodes = nlohmann::json::parse(json.body);
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[1]["name"], "square");
  EXPECT_GT(nodes[1]["messages_out_per_s"].get<double>(), 0);
  EXPECT_GT(nodes[1]["rate_window_s"].get<double>(), 0);

  EXPECT_EQ(get(port, "/nothing").status, 404);
  PipelineResult r = s.p.wait();
  EXPECT_EQ(r.metrics_of("drop").messages_in, 300u);
  EXPECT_EQ(get(port, "/metrics").status, 0) << "no longer served once wait() returned";
}

// A client that connects and sends its request a byte every 300 ms
// (slowloris), for as long as the server keeps it: how long it was kept, in
// ms, once the server cut it off (or -1 when `stop` came first).
int64_t trickle(int port, const std::atomic<bool>& stop) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const auto start = std::chrono::steady_clock::now();
  int64_t kept = -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(4096, 'a');
    for (size_t i = 0; i < request.size() && !stop.load(); ++i) {
      if (send(fd, &request[i], 1, MSG_NOSIGNAL) != 1) break;
      std::this_thread::sleep_for(milliseconds(300));
      char c;
      if (recv(fd, &c, 1, MSG_DONTWAIT) == 0) break;  // the server closed it
    }
    if (!stop.load())
      kept = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start).count();
  }
  close(fd);
  return kept;
}

// One slow client held the server's one thread: no scrape was answered and
// the run could not end while it trickled.
TEST(MetricsHttp, SlowClientsHoldNeitherScrapesNorTheEndOfTheRun) {
  SlowPipeline s({.metrics_port = -1});
  s.p.start();
  const int port = s.p.metrics_port();
  ASSERT_GT(port, 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> slow;
  std::vector<int64_t> kept(10, -1);  // more than the threads that answer
  for (size_t i = 0; i < kept.size(); ++i)
    slow.emplace_back([&, i] {
      // Each connects again once cut off: a client that never gives up.
      while (!stop.load()) {
        const int64_t k = trickle(port, stop);
        if (k >= 0) kept[i] = k;
      }
    });
  std::this_thread::sleep_for(milliseconds(200));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(get(port, "/metrics").status, 200) << "scrape " << i << " with ten slow clients connected";
    std::this_thread::sleep_for(milliseconds(100));
  }
  const auto before = std::chrono::steady_clock::now();
  s.p.wait();  // the source ends after about 1.5 s; the slow clients go on
  const auto waited = std::chrono::steady_clock::now() - before;
  EXPECT_LT(waited, std::chrono::seconds(10)) << "the run's end waited on slow clients";
  // By now each had time to be cut off at least once (2 s a connection).
  std::this_thread::sleep_for(milliseconds(2600));
  stop.store(true);
  for (std::thread& t : slow) t.join();
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_GE(kept[i], 0) << "slow client " << i << " was never cut off";
    EXPECT_LT(kept[i], 6000) << "slow client " << i << " was kept " << kept[i] << " ms";
  }
}

// More connections than it reads at once: those beyond are turned away at
// once, and it answers again once the others are cut off.
TEST(MetricsHttp, AFloodOfIdleConnectionsIsBoundedAndPasses) {
  SlowPipeline s({.metrics_port = -1}, /*messages=*/1000000);  // until cancelled
  s.p.start();
  const int port = s.p.metrics_port();
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {  // more than it reads at once (256)
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    idle.push_back(fd);
  }
  // Those beyond 256 are turned away; the rest are cut off after 2 s.
  bool answered = false;
  for (int i = 0; i < 60 && !answered; ++i) {
    answered = get(port, "/metrics").status == 200;
    if (!answered) std::this_thread::sleep_for(milliseconds(250));
  }
  EXPECT_TRUE(answered) << "never answered again after 300 idle connections";
  s.p.cancel();
  const auto before = std::chrono::steady_clock::now();
  s.p.wait();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(5));
  for (int fd : idle) close(fd);
}

TEST(MetricsHttp, APortInUseIsAPipelineErrorNamingIt) {
  // Hold a port, listening, as another server would.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);

  SlowPipeline s({.metrics_port = port});
  try {
    s.p.run();
    ADD_FAILURE() << "expected a PipelineError";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("metrics_port " + std::to_string(port)), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  close(fd);
}

TEST(MetricsHttp, TwoPipelinesCannotShareAPort) {
  SlowPipeline a({.metrics_port = -1});
  a.p.start();
  SlowPipeline b({.metrics_port = a.p.metrics_port()});
  EXPECT_THROW(b.p.start(), PipelineError);
  a.p.cancel();
  a.p.wait();
}

TEST(MetricsHttp, OffByDefault) {
  SlowPipeline s({});
  s.p.start();
  EXPECT_EQ(s.p.metrics_port(), 0);
  s.p.cancel();
  s.p.wait();
}

TEST(MetricsHttp, APortOutOfRangeIsAPipelineError) {
  SlowPipeline s({.metrics_port = 70000});
  EXPECT_THROW(s.p.start(), PipelineError);
}

}  // namespace
}  // namespace sluice
