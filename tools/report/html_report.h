#pragma once
// The page of `sluice report`: one self-contained HTML file (inline CSS,
// inline SVG charts, no script) drawn from a run log.

#include <optional>
#include <string>

#include "tools/report/run_log_reader.h"
#include "tools/report/svg_timeline.h"

namespace sluice::tools::report {

// Per-stage charts (throughput, latency, queue depth, a table of counts)
// for every log; the spectrogram and the detector's scores and accuracy
// only when the log has those records; a timeline of the run's trace when
// one is given.
std::string html_report(const RunData& data, const std::optional<Timeline>& timeline = std::nullopt);

}  // namespace sluice::tools::report
