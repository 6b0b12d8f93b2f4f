#pragma once
// A trace (PipelineOptions::trace, `sluice demo --trace`) as an inline SVG
// timeline for `sluice report --trace`: a row per thread of each process,
// each node's slices in its color, over a window of the run (a page of
// every message of a long run would be unreadable and huge), and the flows
// of a few messages drawn across the rows they passed through.

#include <string>
#include <vector>

namespace sluice::tools::report {

struct TimelineSlice {
  size_t row, node;
  double start_us, dur_us;  // from the window's start
};

struct Timeline {
  std::string path;
  std::vector<std::string> rows;      // "process, thread N", in the order of the trace's processes
  std::vector<std::string> nodes;     // as first seen
  std::vector<TimelineSlice> slices;  // those in the window
  std::vector<std::vector<std::pair<double, size_t>>> flows;  // a few messages: (time, row) along each
  double window_us = 0;
  size_t slices_total = 0, messages_total = 0;  // in the whole trace
};

// Reads the trace at `path`, keeping a window of `window_ms` from the
// start of the message in the middle of the run. ValueError naming the file
// and what is wrong: not readable, not JSON, no traceEvents, a slice
// without its fields.
Timeline read_trace(const std::string& path, double window_ms = 20);

std::string timeline_picture(const Timeline& t);

}  // namespace sluice::tools::report
