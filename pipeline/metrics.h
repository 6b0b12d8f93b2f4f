#pragma once
// Per-node metrics of a running pipeline: counters updated lock-free by the
// node's body, read as a snapshot at any time, and written as JSON or in
// Prometheus' text format (README, "Metrics").

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

// A snapshot of one node's counters.
struct NodeMetrics {
  std::string name;
  std::string kind;  // "source", "stage", "sink"
  uint64_t messages_in = 0, messages_out = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  uint64_t errors = 0;         // messages that failed here
  uint64_t skipped = 0;        // messages dropped upstream that passed through
  double busy_seconds = 0;     // time spent in the node's body
  int64_t queue_depth = 0;     // messages waiting to enter the node
  double latency_p50_us = 0;   // from a message's birth at its source to leaving this node
  double latency_p99_us = 0;
  // The same latencies in LatencyHistogram's fixed buckets: how many were at
  // most each of kBoundsUs, then all of them (+Inf); their count and sum.
  std::vector<uint64_t> latency_buckets;
  uint64_t latency_count = 0;
  double latency_sum_s = 0;
  // Messages and bytes out per second over the last rate window
  // (Pipeline::metrics says which), spanning rate_window_s (0: no window yet).
  double messages_out_per_s = 0, bytes_out_per_s = 0;
  double rate_window_s = 0;
  // Figures of the node's own kind (a batcher's batch sizes, say), by name.
  std::map<std::string, double> figures;
};

// A checkpoint's figures, and the age of the last one completed.
struct CheckpointMetrics {
  int64_t completed = 0, failed = 0;  // this run
  int64_t last_number = 0;            // 0 until one completes
  double last_duration_s = 0;         // its first barrier placed to stored
  double last_alignment_s = 0;        // its first barrier placed to its last snapshot taken
  int64_t last_bytes = 0;             // written to the store
  double age_s = 0;                   // since the last completed (0 until one completes)
};

// Latencies in a log-linear histogram (8 steps per power of two), so
// percentiles cost no allocation and no lock on the hot path; and counted
// again in a few fixed buckets, which Prometheus' histograms need (their
// bounds cannot follow the log-linear steps).
class LatencyHistogram {
 public:
  // The fixed buckets' upper bounds (inclusive), in microseconds; +Inf follows.
  static constexpr std::array<double, 16> kBoundsUs = {50,    100, 250, 500,   1e3, 2.5e3, 5e3,   1e4,
                                                       2.5e4, 5e4, 1e5, 2.5e5, 5e5, 1e6,   2.5e6, 5e6};
  struct Cumulative {
    std::vector<uint64_t> buckets;  // at most each bound, then all (+Inf, == count)
    uint64_t count = 0;
    double sum_s = 0;  // kept in nanoseconds: one rounding
  };

  void record(double microseconds);
  double percentile(double p) const;  // 0 < p < 1; 0 when empty
  Cumulative cumulative() const;

 private:
  static constexpr int kSubBuckets = 8;
  static constexpr int kBuckets = 64 * kSubBuckets;
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
  std::array<std::atomic<uint64_t>, kBoundsUs.size() + 1> fixed_{};  // not cumulative
  std::atomic<uint64_t> sum_ns_{0};
};

struct NodeTrace;  // detail/trace_recorder.h

// The live counters behind a NodeMetrics snapshot.
struct NodeCounters {
  std::atomic<uint64_t> messages_in{0}, messages_out{0}, bytes_in{0}, bytes_out{0}, errors{0}, skipped{0};
  std::atomic<uint64_t> busy_ns{0};
  LatencyHistogram latency;
  // While a traced run runs (PipelineOptions::trace): where each visit is recorded.
  const NodeTrace* trace = nullptr;
};

// The snapshot as a JSON array of objects, one per node, indented by
// `indent` spaces a level (-1: all on one line, as a run log's records are).
std::string metrics_json(const std::vector<NodeMetrics>& metrics, int indent = 2);

// The snapshot in Prometheus' text exposition format (version 0.0.4): one
// family per counter (sluice_node_messages_total{direction="in|out"}, ...)
// with labels pipeline, node and kind; the latency as a histogram in
// seconds; node figures as sluice_node_figure{name="..."}; and, given
// `checkpoints`, the process's checkpoint counters and age. Label values
// are escaped as the format says.
std::string metrics_prometheus(const std::vector<NodeMetrics>& metrics, const std::string& pipeline,
                               const std::optional<CheckpointMetrics>& checkpoints = std::nullopt);

}  // namespace sluice
