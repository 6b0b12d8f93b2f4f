#include "pipeline/metrics.h"

#include <bit>
#include <cmath>

#include <nlohmann/json.hpp>

namespace sluice {

namespace {
// Bucket of a value in nanoseconds: its power of two, then 8 linear steps within it.
int bucket_of(uint64_t ns) {
  if (ns < 8) return static_cast<int>(ns);
  int exp = 63 - std::countl_zero(ns);
  int sub = static_cast<int>((ns >> (exp - 3)) & 7);
  return std::min((exp - 2) * 8 + sub, 64 * 8 - 1);
}
double bucket_mid_ns(int b) {
  if (b < 8) return b;
  int exp = b / 8 + 2, sub = b % 8;
  double lo = std::ldexp(8 + sub, exp - 3);
  return lo + std::ldexp(1, exp - 3) / 2;
}
}  // namespace

void LatencyHistogram::record(double microseconds) {
  uint64_t ns = microseconds <= 0 ? 0 : static_cast<uint64_t>(microseconds * 1000.0);
  counts_[static_cast<size_t>(bucket_of(ns))].fetch_add(1, std::memory_order_relaxed);
}

double LatencyHistogram::percentile(double p) const {
  uint64_t total = 0;
  for (const auto& c : counts_) total += c.load(std::memory_order_relaxed);
  if (total == 0) return 0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(p * static_cast<double>(total)));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[static_cast<size_t>(b)].load(std::memory_order_relaxed);
    if (seen >= rank) return bucket_mid_ns(b) / 1000.0;
  }
  return bucket_mid_ns(kBuckets - 1) / 1000.0;
}

std::string metrics_json(const std::vector<NodeMetrics>& metrics) {
  nlohmann::json out = nlohmann::json::array();
  for (const NodeMetrics& m : metrics) {
    nlohmann::json node = {{"name", m.name},
                           {"kind", m.kind},
                           {"messages_in", m.messages_in},
                           {"messages_out", m.messages_out},
                           {"bytes_in", m.bytes_in},
                           {"bytes_out", m.bytes_out},
                           {"errors", m.errors},
                           {"skipped", m.skipped},
                           {"busy_seconds", m.busy_seconds},
                           {"queue_depth", m.queue_depth},
                           {"latency_p50_us", m.latency_p50_us},
                           {"latency_p99_us", m.latency_p99_us}};
    for (const auto& [name, value] : m.figures) node[name] = value;
    out.push_back(std::move(node));
  }
  return out.dump(2);
}

}  // namespace sluice
