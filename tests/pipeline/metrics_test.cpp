// Metrics as text: the Prometheus exposition (escaping, histogram buckets),
// the latency histogram's fixed buckets, the windowed rates and the
// channel figures of ZeroMQ sources and sinks.

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <sluice/pipeline/metrics.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/zmq_nodes.h>
#include "tests/pipeline/slow_counter.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
    at = end + 1;
  }
  return out;
}

TEST(LatencyHistogram, FixedBucketsAreCumulativeAndInclusive) {
  LatencyHistogram h;
  for (double us : {10.0, 50.0, 50.5, 999.0, 1000.0, 7e6}) h.record(us);
  LatencyHistogram::Cumulative c = h.cumulative();
  ASSERT_EQ(c.buckets.size(), LatencyHistogram::kBoundsUs.size() + 1);
  EXPECT_EQ(c.count, 6u);
  EXPECT_EQ(c.buckets[0], 2u);   // le 50us: 10 and 50 (the bound is inclusive)
  EXPECT_EQ(c.buckets[1], 3u);   // le 100us: and 50.5
  EXPECT_EQ(c.buckets[3], 3u);   // le 500us
  EXPECT_EQ(c.buckets[4], 5u);   // le 1ms: and 999, 1000
  EXPECT_EQ(c.buckets[15], 5u);  // le 5s
  EXPECT_EQ(c.buckets[16], 6u);  // +Inf: all
  EXPECT_NEAR(c.sum_s, (10 + 50 + 50.5 + 999 + 1000 + 7e6) / 1e6, 1e-9);
  for (size_t b = 1; b < c.buckets.size(); ++b) EXPECT_LE(c.buckets[b - 1], c.buckets[b]);
}

TEST(MetricsPrometheus, EscapesLabelValuesAndWritesEachFamilyOnce) {
  NodeMetrics m;
  m.name = "a \"quoted\" \\ name\nwith a line";
  m.kind = "stage";
  m.messages_in = 7;
  m.messages_out = 5;
  m.busy_seconds = 0.25;
  m.figures["odd \"figure\""] = 1.5;
  std::string text = metrics_prometheus({m}, "p\\1");
  const std::string labels = R"({pipeline="p\\1",node="a \"quoted\" \\ name\nwith a line",kind="stage")";
  EXPECT_NE(text.find("sluice_node_messages_total" + labels + ",direction=\"in\"} 7\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("sluice_node_messages_total" + labels + ",direction=\"out\"} 5\n"), std::string::npos);
  EXPECT_NE(text.find("sluice_node_busy_seconds_total" + labels + "} 0.25\n"), std::string::npos);
  EXPECT_NE(text.find("sluice_node_figure" + labels + R"(,name="odd \"figure\""} 1.5)" + "\n"),
            std::string::npos);
  // No raw line feed inside a sample: every line is a comment or a sample.
  for (const std::string& line : lines_starting(text, ""))
    EXPECT_TRUE(line.rfind("# ", 0) == 0 || line.rfind("sluice_", 0) == 0) << line;
  for (const char* family :
       {"sluice_node_messages_total", "sluice_node_bytes_total", "sluice_node_errors_total",
        "sluice_node_skipped_total", "sluice_node_busy_seconds_total", "sluice_node_queue_depth",
        "sluice_node_latency_seconds", "sluice_node_figure"}) {
    EXPECT_EQ(lines_starting(text, std::string("# TYPE ") + family + " ").size(), 1u) << family;
    EXPECT_EQ(lines_starting(text, std::string("# HELP ") + family + " ").size(), 1u) << family;
  }
  EXPECT_EQ(lines_starting(text, "# TYPE sluice_node_latency_seconds histogram").size(), 1u);
  EXPECT_EQ(text.find("sluice_checkpoint"), std::string::npos)
      << "no checkpoint families without checkpoints";
}

TEST(MetricsPrometheus, HistogramBucketsInSecondsEndWithInfEqualToCount) {
  LatencyHistogram h;
  for (double us : {20.0, 300.0, 300.0, 2e4}) h.record(us);
  LatencyHistogram::Cumulative c = h.cumulative();
  NodeMetrics m;
  m.name = "n";
  m.kind = "sink";
  m.latency_buckets = c.buckets;
  m.latency_count = c.count;
  m.latency_sum_s = c.sum_s;
  std::string text = metrics_prometheus({m}, "p");
  std::vector<std::string> buckets = lines_starting(text, "sluice_node_latency_seconds_bucket{");
  ASSERT_EQ(buckets.size(), 17u) << text;
  EXPECT_NE(buckets[0].find("le=\"5e-05\"} 1"), std::string::npos) << buckets[0];
  EXPECT_NE(buckets[3].find("le=\"0.0005\"} 3"), std::string::npos) << buckets[3];
  EXPECT_NE(buckets[8].find("le=\"0.025\"} 4"), std::string::npos) << buckets[8];
  EXPECT_NE(buckets[13].find("le=\"1\"} 4"), std::string::npos) << buckets[13];
  EXPECT_NE(buckets[16].find("le=\"+Inf\"} 4"), std::string::npos) << buckets[16];
  EXPECT_EQ(lines_starting(text, "sluice_node_latency_seconds_count{").at(0),
            R"(sluice_node_latency_seconds_count{pipeline="p",node="n",kind="sink"} 4)");
  EXPECT_EQ(lines_starting(text, "sluice_node_latency_seconds_sum{").at(0),
            R"(sluice_node_latency_seconds_sum{pipeline="p",node="n",kind="sink"} 0.02062)");

  // A snapshot without buckets is still a histogram: +Inf alone.
  NodeMetrics bare;
  bare.name = "b";
  bare.kind = "stage";
  bare.latency_count = 3;
  std::vector<std::string> one =
      lines_starting(metrics_prometheus({bare}, "p"), "sluice_node_latency_seconds_bucket{");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NE(one[0].find("le=\"+Inf\"} 3"), std::string::npos);
}

TEST(MetricsPrometheus, CheckpointFamiliesOnceCheckpointsExist) {
  CheckpointMetrics none;
  std::string text = metrics_prometheus({}, "p", none);
  EXPECT_NE(text.find("sluice_checkpoints_completed_total{pipeline=\"p\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("sluice_checkpoints_failed_total{pipeline=\"p\"} 0\n"), std::string::npos);
  EXPECT_EQ(text.find("sluice_checkpoint_age_seconds"), std::string::npos) << "no age before one completes";
  CheckpointMetrics some{.completed = 3, .failed = 1, .last_number = 3, .last_bytes = 4096, .age_s = 0.5};
  text = metrics_prometheus({}, "p", some);
  EXPECT_NE(text.find("# TYPE sluice_checkpoints_completed_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("sluice_checkpoints_completed_total{pipeline=\"p\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("sluice_checkpoint_age_seconds{pipeline=\"p\"} 0.5\n"), std::string::npos);
  EXPECT_NE(text.find("sluice_checkpoint_last_bytes{pipeline=\"p\"} 4096\n"), std::string::npos);
}

TEST(PipelineMetrics, RatesSpanTheWindowSinceTheRunStarted) {
  Pipeline p;
  auto src = p.source("numbers", slow_counter(40, milliseconds(5)));
  p.connect(src, p.sink("drop", [](const Tensor&) {}));
  p.start();
  std::this_thread::sleep_for(milliseconds(100));
  std::vector<NodeMetrics> mid = p.metrics();
  PipelineResult r = p.wait();
  const NodeMetrics& m = r.metrics_of("numbers");
  // Every message in the window (well under 10 s): the rate is the count over the window.
  EXPECT_EQ(m.messages_out, 40u);
  ASSERT_GT(m.rate_window_s, 0.1);
  EXPECT_NEAR(m.messages_out_per_s, 40 / m.rate_window_s, 1e-6);
  EXPECT_NEAR(m.bytes_out_per_s, 40 * 8 / m.rate_window_s, 1e-6);
  EXPECT_GT(mid.at(0).messages_out_per_s, 0);
  EXPECT_EQ(m.latency_count, r.metrics_of("numbers").messages_out);
  EXPECT_EQ(r.metrics_of("drop").latency_buckets.back(), 40u);
  std::string json = p.metrics_json();
  for (const char* key :
       {"\"messages_out_per_s\"", "\"bytes_out_per_s\"", "\"rate_window_s\"", "\"latency_count\""})
    EXPECT_NE(json.find(key), std::string::npos) << key;
}

TEST(PipelineMetrics, ZeroMqSinksAndSourcesReportTheirChannels) {
  const std::string endpoint = "inproc://metrics-channel-figures";
  auto in = sources::zmq("@" + endpoint, {s64()});
  auto out = sinks::zmq(">" + endpoint);
  Pipeline sending, receiving;
  NodeId numbers = sending.source("numbers", slow_counter(30, milliseconds(1)));
  sending.connect(numbers, sending.sink("out", out));
  NodeId received = receiving.source("in", in);
  receiving.connect(received, receiving.sink("drop", [](const Tensor&) {}));
  receiving.start();
  sending.start();
  // Mid-run, from this thread: the channels' counters as figures.
  std::map<std::string, double> sink_figures = sending.metrics().at(1).figures;
  for (const char* name :
       {"channel_credit", "channel_unacknowledged", "channel_resent", "channel_peers_lost", "channel_shared"})
    EXPECT_TRUE(sink_figures.contains(name)) << name;
  sending.wait();
  PipelineResult r = receiving.wait();
  EXPECT_EQ(r.metrics_of("drop").messages_in, 30u);
  const std::map<std::string, double>& source_figures = r.metrics_of("in").figures;
  for (const char* name :
       {"channel_peers_lost", "channel_duplicates", "channel_rejected", "channel_shared", "channel_in_pipeline"})
    EXPECT_TRUE(source_figures.contains(name)) << name;
  EXPECT_EQ(source_figures.at("channel_in_pipeline"), 0);
  const std::map<std::string, double> after = sending.metrics().at(1).figures;
  EXPECT_EQ(after.at("channel_unacknowledged"), 0) << "finish() waited for every acknowledgement";
  EXPECT_EQ(out->channel_counters().credit, ChannelOptions{}.credit_messages) << "all room back";
  EXPECT_EQ(after.at("channel_resent"), 0);
}

}  // namespace
}  // namespace sluice
