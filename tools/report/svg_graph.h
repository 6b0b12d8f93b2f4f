#pragma once
// The pipeline's graph as inline SVG for `sluice report`: nodes in columns
// by their depth from the sources, edges labelled with the specs they carry,
// each process's nodes inside a dashed box. No script, nothing fetched.

#include <string>

#include "tools/report/run_log_reader.h"

namespace sluice::tools::report {

std::string graph_picture(const PipelineGraph& graph);

}  // namespace sluice::tools::report
