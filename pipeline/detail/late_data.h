#pragma once
// What zip_by_time and event_window share (pipeline/event_time.h): where
// their late data goes, and how they hand on what they emit. Internal.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <sluice/pipeline/node.h>
#include <sluice/pipeline/sinks.h>

namespace sluice {

// Late chunks: to the node's late sink, tagged with the input they came on
// ("late_input"), or counted and logged. Called under the node's lock.
class LateData {
 public:
  LateData(std::shared_ptr<Sink> sink, std::string option)
      : sink_(std::move(sink)), option_(std::move(option)) {}
  void inputs(size_t n) { late_.assign(n, 0); }
  // A chunk of `rows` rows on `input`, starting at or before `bound` (ns).
  void take(const std::string& who, size_t input, const Tensors& host, const Tags& tags, int64_t rows,
            int64_t bound);
  void end_stream();
  void finish();
  // late_messages, late_rows and, with several inputs, late_input<k>.
  void add_metrics(NodeMetrics& m) const;
  // Its counts (and the late sink's next number), for a checkpoint, and back.
  std::vector<uint64_t> counts() const;
  void restore_counts(const std::vector<uint64_t>& counts, const std::string& who);

 private:
  std::shared_ptr<Sink> sink_;
  std::string option_;          // which option takes them, for the log
  std::vector<uint64_t> late_;  // per input
  uint64_t rows_ = 0, seq_ = 0;
};

// Hands each message on, counted out of the visit.
void put_all(Visit& visit, std::vector<Envelope>& out, tbb::flow::broadcast_node<Envelope>& to);

}  // namespace sluice
