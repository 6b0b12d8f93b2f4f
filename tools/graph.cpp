// `sluice graph`: the demo's pipeline as a picture, each process of its
// three (source, compute, sink) a box of its nodes, each edge labelled with
// the specs it carries: DOT for Graphviz (`sluice graph | dot -Tsvg`), or
// Mermaid's flowchart for Markdown viewers. Drawing traces the stages but
// runs nothing.

#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <sensor_monitor/sensor_monitor.h>
#include <sluice/pipeline/pipeline.h>
#include "tools/commands.h"

namespace sluice::tools {

Command add_graph_command(CLI::App& app) {
  auto format = std::make_shared<std::string>("dot");
  CLI::App* graph = app.add_subcommand(
      "graph", "draw the demo's pipeline: its nodes, the specs on each edge, each process a box");
  graph->add_option("--format", *format, "dot (Graphviz) or mermaid")
      ->check(CLI::IsMember({"dot", "mermaid"}))
      ->capture_default_str();
  return {graph, [format] {
            sensor_monitor::Config c;
            c.device = host();  // the stages are traced, never run: no device is needed
            Pipeline p(sensor_monitor::pipeline_options(c));
            // The monitor is drawn, never run: a collector stands in for it.
            sensor_monitor::add_sensor_monitor(p, c, sinks::collector());
            std::cout << (*format == "dot" ? p.to_dot() : p.to_mermaid());
            return kExitOk;
          }};
}

}  // namespace sluice::tools
