#pragma once
// A run log (pipeline/run_log.h) read back for `sluice report`: the
// metrics of each node over time, and the sensor monitor's records when
// there are any. Times are seconds from the log's first record.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sluice::tools::report {

// One node of one process, snapshot after snapshot.
struct NodeSeries {
  std::string process;  // empty: not partitioned
  std::string name, kind;
  std::string label() const { return process.empty() ? name : process + ": " + name; }
  std::vector<double> t;
  std::vector<double> rate;            // messages out per second, over the pipeline's rate window
  std::vector<double> p50_ms, p99_ms;  // latency since the start of the run
  std::vector<double> queue_depth;
  double messages_in = 0, messages_out = 0, errors = 0;  // at the last snapshot
};

// The detector's scores of one chunk against the true labels ("scores"):
// the monitor writes one every so often, with its accuracy.
struct ScoredChunk {
  double t;
  std::vector<double> scores, labels;  // a window each
  double accuracy;                     // over every window so far
  double recent_accuracy;              // over the windows since the record before
};

// One chunk of one channel's spectrogram ("spectrogram").
struct SpectrumChunk {
  double t;
  int64_t channel;
  std::vector<std::vector<double>> windows;  // [window][band]
  std::vector<double> labels;                // a window each
};

// The pipeline's graph ("graph", which a pipeline writes when its run
// starts): its nodes and edges, as Pipeline::to_dot draws them. Each process
// of a partitioned pipeline writes the whole program's: the first is kept.
struct GraphNode {
  std::string name, kind, process;
};
struct GraphEdge {
  size_t from, to;    // indices into nodes
  std::string specs;  // what it carries: "f32[16][256], f32[16], s64"
};
struct PipelineGraph {
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
};

struct RunData {
  std::string path;
  double duration_s = 0;  // first record to last
  int64_t records = 0;
  std::vector<std::string> processes;  // as first seen
  std::vector<NodeSeries> nodes;       // as first seen
  std::vector<ScoredChunk> scores;
  std::vector<SpectrumChunk> spectrogram;
  std::optional<PipelineGraph> graph;
  std::vector<std::string> warnings;  // a torn last line skipped, record types not drawn
};

// Reads the log at `path`. ValueError naming the file, the line and what
// is wrong there: a file that cannot be read, one without records, a line
// that is not a JSON object with `t` and `type`, a record whose fields are
// missing or of the wrong kind. A last line without its newline that does
// not parse (a writer killed mid-line) is skipped with a warning.
RunData read_run_log(const std::string& path);

}  // namespace sluice::tools::report
