// `sluice trace merge OUT IN...`: the trace files of a partitioned
// pipeline's processes (PipelineOptions::trace) as one timeline, each
// file's clock moved onto the first's where their hosts differ. Open the
// result in ui.perfetto.dev or chrome://tracing.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <sluice/pipeline/trace.h>
#include "tools/commands.h"

namespace sluice::tools {

Command add_trace_command(CLI::App& app) {
  struct Options {
    std::string output;
    std::vector<std::string> inputs;
  };
  auto o = std::make_shared<Options>();
  CLI::App* trace =
      app.add_subcommand("trace", "work with the timelines pipelines write (PipelineOptions::trace)");
  trace->require_subcommand(1);
  CLI::App* merge = trace->add_subcommand("merge", "merge processes' trace files into one timeline");
  merge->add_option("output", o->output, "the merged trace (JSON)")->required();
  merge->add_option("inputs", o->inputs, "each process's trace file")->required();
  return {trace, [o] {
            for (const TraceFile& f : merge_traces(o->inputs, o->output))
              std::cout << fmt::format(
                  "{}: process '{}' on {}, clocks {:+.3f} ms from the first's, moved by {:.3f} ms\n", f.path,
                  f.process, f.host, f.clock_difference_us / 1e3, f.offset_us / 1e3);
            std::cout << "merged into " << o->output << "\n";
            return kExitOk;
          }};
}

}  // namespace sluice::tools
