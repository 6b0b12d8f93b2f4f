#include <sluice/pipeline/metrics.h>

#include <sluice/ops/detail/error_format.h>

#include <algorithm>
#include <bit>
#include <charconv>
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
  // The first bound at or above it: le is inclusive.
  auto fixed = std::lower_bound(kBoundsUs.begin(), kBoundsUs.end(), microseconds) - kBoundsUs.begin();
  fixed_[static_cast<size_t>(fixed)].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(ns, std::memory_order_relaxed);
}

LatencyHistogram::Cumulative LatencyHistogram::cumulative() const {
  Cumulative c;
  c.buckets.reserve(fixed_.size());
  for (const auto& n : fixed_) {
    c.count += n.load(std::memory_order_relaxed);
    c.buckets.push_back(c.count);
  }
  c.sum_s = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return c;
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

std::string metrics_json(const std::vector<NodeMetrics>& metrics, int indent) {
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
                           {"latency_p99_us", m.latency_p99_us},
                           {"latency_count", m.latency_count},
                           {"latency_sum_s", m.latency_sum_s},
                           {"messages_out_per_s", m.messages_out_per_s},
                           {"bytes_out_per_s", m.bytes_out_per_s},
                           {"rate_window_s", m.rate_window_s}};
    for (const auto& [name, value] : m.figures) node[name] = value;
    out.push_back(std::move(node));
  }
  return out.dump(indent);
}

namespace {

// Label values: backslash, double quote and line feed escaped.
std::string label_value(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// As Go's %g writes floats, which the format follows: the shortest digits
// that read back the same (0.0005, 5e-05), +Inf, -Inf, NaN.
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
  return std::string(buf, end);
}
std::string number(uint64_t v) { return fmt::format("{}", v); }
std::string number(int64_t v) { return fmt::format("{}", v); }

class Exposition {
 public:
  explicit Exposition(std::string pipeline) : pipeline_(label_value(pipeline)) {}

  // HELP and TYPE: every sample of the family follows.
  void family(const std::string& name, const char* type, const char* help) {
    text_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  // One sample; `labels` come after pipeline, node and kind, already escaped.
  void node_sample(const std::string& name, const NodeMetrics& m, const std::string& labels,
                   const std::string& value) {
    text_ += name + "{pipeline=\"" + pipeline_ + "\",node=\"" + label_value(m.name) + "\",kind=\"" +
             label_value(m.kind) + "\"" + (labels.empty() ? "" : "," + labels) + "} " + value + "\n";
  }
  void process_sample(const std::string& name, const std::string& value) {
    text_ += name + "{pipeline=\"" + pipeline_ + "\"} " + value + "\n";
  }
  std::string take() { return std::move(text_); }

 private:
  std::string pipeline_;
  std::string text_;
};

}  // namespace

std::string metrics_prometheus(const std::vector<NodeMetrics>& metrics, const std::string& pipeline,
                               const std::optional<CheckpointMetrics>& checkpoints) {
  Exposition e(pipeline);
  auto per_node = [&](const std::string& name, const char* type, const char* help, auto value_of) {
    e.family(name, type, help);
    for (const NodeMetrics& m : metrics) e.node_sample(name, m, "", number(value_of(m)));
  };
  e.family("sluice_node_messages_total", "counter", "Messages into (direction=in) and out of a node.");
  for (const NodeMetrics& m : metrics) {
    e.node_sample("sluice_node_messages_total", m, "direction=\"in\"", number(m.messages_in));
    e.node_sample("sluice_node_messages_total", m, "direction=\"out\"", number(m.messages_out));
  }
  e.family("sluice_node_bytes_total", "counter", "Tensor bytes into (direction=in) and out of a node.");
  for (const NodeMetrics& m : metrics) {
    e.node_sample("sluice_node_bytes_total", m, "direction=\"in\"", number(m.bytes_in));
    e.node_sample("sluice_node_bytes_total", m, "direction=\"out\"", number(m.bytes_out));
  }
  per_node("sluice_node_errors_total", "counter", "Messages that failed in a node.",
           [](const NodeMetrics& m) { return m.errors; });
  per_node("sluice_node_skipped_total", "counter", "Messages dropped upstream that passed through a node.",
           [](const NodeMetrics& m) { return m.skipped; });
  per_node("sluice_node_busy_seconds_total", "counter", "Time spent in a node's body.",
           [](const NodeMetrics& m) { return m.busy_seconds; });
  per_node("sluice_node_queue_depth", "gauge", "Messages waiting to enter a node.",
           [](const NodeMetrics& m) { return m.queue_depth; });

  const std::string latency = "sluice_node_latency_seconds";
  e.family(latency, "histogram", "From a message's birth at its source to leaving a node.");
  for (const NodeMetrics& m : metrics) {
    // A snapshot made by hand may lack the buckets: +Inf alone is still a histogram.
    const size_t bounds = m.latency_buckets.size() == LatencyHistogram::kBoundsUs.size() + 1
                              ? LatencyHistogram::kBoundsUs.size()
                              : 0;
    for (size_t b = 0; b < bounds; ++b)
      e.node_sample(latency + "_bucket", m, "le=\"" + number(LatencyHistogram::kBoundsUs[b] / 1e6) + "\"",
                    number(m.latency_buckets[b]));
    e.node_sample(latency + "_bucket", m, "le=\"+Inf\"", number(m.latency_count));
    e.node_sample(latency + "_sum", m, "", number(m.latency_sum_s));
    e.node_sample(latency + "_count", m, "", number(m.latency_count));
  }

  e.family("sluice_node_figure", "gauge",
           "Figures of a node's own kind, by name (a batcher's batch sizes, a channel's credit).");
  for (const NodeMetrics& m : metrics)
    for (const auto& [name, value] : m.figures)
      e.node_sample("sluice_node_figure", m, "name=\"" + label_value(name) + "\"", number(value));

  if (checkpoints) {
    const CheckpointMetrics& c = *checkpoints;
    e.family("sluice_checkpoints_completed_total", "counter", "Checkpoints stored by this run.");
    e.process_sample("sluice_checkpoints_completed_total", number(c.completed));
    e.family("sluice_checkpoints_failed_total", "counter", "Checkpoints that failed in this run.");
    e.process_sample("sluice_checkpoints_failed_total", number(c.failed));
    // Absent until one completes: an age of 0 would read as fresh.
    if (c.completed > 0) {
      e.family("sluice_checkpoint_age_seconds", "gauge", "Time since the last checkpoint completed.");
      e.process_sample("sluice_checkpoint_age_seconds", number(c.age_s));
      e.family("sluice_checkpoint_last_number", "gauge", "The number of the last checkpoint completed.");
      e.process_sample("sluice_checkpoint_last_number", number(c.last_number));
      e.family("sluice_checkpoint_last_duration_seconds", "gauge",
               "The last checkpoint's first barrier placed to stored.");
      e.process_sample("sluice_checkpoint_last_duration_seconds", number(c.last_duration_s));
      e.family("sluice_checkpoint_last_bytes", "gauge", "Bytes the last checkpoint wrote to its store.");
      e.process_sample("sluice_checkpoint_last_bytes", number(c.last_bytes));
    }
  }
  return e.take();
}

}  // namespace sluice
