#pragma once
// Per-node metrics of a running pipeline: counters updated lock-free by the
// node's body, read as a snapshot at any time.

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
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
  // Figures of the node's own kind (a batcher's batch sizes, say), by name.
  std::map<std::string, double> figures;
};

// Latencies in a log-linear histogram (8 steps per power of two), so
// percentiles cost no allocation and no lock on the hot path.
class LatencyHistogram {
 public:
  void record(double microseconds);
  double percentile(double p) const;  // 0 < p < 1; 0 when empty

 private:
  static constexpr int kSubBuckets = 8;
  static constexpr int kBuckets = 64 * kSubBuckets;
  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
};

// The live counters behind a NodeMetrics snapshot.
struct NodeCounters {
  std::atomic<uint64_t> messages_in{0}, messages_out{0}, bytes_in{0}, bytes_out{0}, errors{0}, skipped{0};
  std::atomic<uint64_t> busy_ns{0};
  LatencyHistogram latency;
};

// The snapshot as a JSON array of objects, one per node.
std::string metrics_json(const std::vector<NodeMetrics>& metrics);

}  // namespace sluice
