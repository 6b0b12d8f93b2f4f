#pragma once
// The page of `sluice report`: one self-contained HTML file (inline CSS,
// inline SVG charts, no script) drawn from a run log.

#include <string>

#include "tools/report/run_log_reader.h"

namespace sluice::tools::report {

// Per-stage charts (throughput, latency, queue depth, a table of counts)
// for every log; the spectrogram and the detector's scores and accuracy
// only when the log has those records.
std::string html_report(const RunData& data);

}  // namespace sluice::tools::report
