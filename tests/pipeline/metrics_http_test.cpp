// Metrics served over HTTP while a pipeline runs (PipelineOptions::metrics_port),
// scraped with cpp-httplib's client as Prometheus would.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

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
  explicit SlowPipeline(PipelineOptions o) : p(o) {
    auto src = p.source("numbers", slow_counter(300, milliseconds(5)));
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
