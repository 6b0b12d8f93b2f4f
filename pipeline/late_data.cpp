#include <sluice/pipeline/detail/late_data.h>

#include <fmt/format.h>

#include <sluice/base/detail/log.h>
#include <sluice/base/error.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {

void LateData::take(const std::string& who, size_t input, const Tensors& host, const Tags& tags, int64_t rows,
                    int64_t bound) {
  ++late_.at(input);
  rows_ += static_cast<uint64_t>(rows);
  if (sink_) {
    Tags t = tags;
    t.set("late_input", static_cast<int64_t>(input));
    sink_->consume_tagged(seq_++, host, t);
    return;
  }
  logger().warn(
      "{}: input {}'s chunk of {} rows at {} ns is late: it starts at or before {} ns; {} late so far "
      "({} takes them)",
      who, input, rows, tags.time_ns().value_or(0), bound, late_[input], option_);
}

void LateData::end_stream() {
  if (sink_) sink_->end_stream();
}

void LateData::finish() {
  if (sink_) sink_->finish();
}

void LateData::add_metrics(NodeMetrics& m) const {
  uint64_t late = 0;
  for (size_t k = 0; k < late_.size(); ++k) {
    if (late_.size() > 1) m.figures[fmt::format("late_input{}", k)] = static_cast<double>(late_[k]);
    late += late_[k];
  }
  m.figures["late_messages"] = static_cast<double>(late);
  m.figures["late_rows"] = static_cast<double>(rows_);
}

std::vector<uint64_t> LateData::counts() const {
  std::vector<uint64_t> c = late_;
  c.push_back(rows_);
  c.push_back(seq_);
  return c;
}

void LateData::restore_counts(const std::vector<uint64_t>& counts, const std::string& who) {
  if (counts.size() != late_.size() + 2)
    throw CheckpointError(error_message(who, "its late data's counts", fmt::format("{}", late_.size() + 2),
                                        fmt::format("{}", counts.size())));
  late_.assign(counts.begin(), counts.end() - 2);
  rows_ = counts[counts.size() - 2];
  seq_ = counts.back();
}

void put_all(Visit& visit, std::vector<Envelope>& out, tbb::flow::broadcast_node<Envelope>& to) {
  for (Envelope& e : out) {
    visit.leave(e);
    to.try_put(e);
  }
}

}  // namespace sluice
