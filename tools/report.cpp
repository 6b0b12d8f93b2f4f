// `sluice report RUN.jsonl -o report.html`: a run log (PipelineOptions::run_log,
// `sluice demo --run-log`) as one self-contained HTML page: per-stage
// throughput, latency and queue depth over time, and, for the demo, a
// spectrogram of one channel, the detector's scores against the true faults
// and its accuracy over time; with --trace, a timeline of the run's trace.
// Charts are inline SVG drawn here; the page has no script and fetches nothing.

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include <sluice/base/error.h>
#include "tools/commands.h"
#include "tools/report/html_report.h"
#include "tools/report/run_log_reader.h"

namespace sluice::tools {
namespace {

struct ReportOptions {
  std::string run_log;
  std::string output = "report.html";
  std::string trace;  // PipelineOptions::trace's file (empty: no timeline)
};

int write_report(const ReportOptions& o) {
  report::RunData data = report::read_run_log(o.run_log);
  for (const std::string& w : data.warnings) std::cerr << "sluice report: " << o.run_log << ": " << w << "\n";
  std::optional<report::Timeline> timeline;
  if (!o.trace.empty()) timeline = report::read_trace(o.trace);
  const std::string page = report::html_report(data, timeline);
  std::ofstream out(o.output, std::ios::binary | std::ios::trunc);
  if (!out)
    throw ValueError(
        error_message("sluice report", "cannot create '" + o.output + "': " + std::strerror(errno), "", ""));
  out << page;
  out.close();
  if (!out)
    throw ValueError(
        error_message("sluice report", "writing '" + o.output + "' failed: " + std::strerror(errno), "", ""));
  std::cout << "sluice report: wrote " << o.output << " (" << page.size() / 1024 << " KiB) from "
            << data.records << " records of " << o.run_log << "\n";
  return kExitOk;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* report = app.add_subcommand(
      "report",
      "a run log (sluice demo --run-log, PipelineOptions::run_log) as one self-contained HTML page of "
      "charts: "
      "per-stage throughput, latency and queue depth; the demo's spectrogram, scores and accuracy");
  report->add_option("run_log", o->run_log, "the run log: JSON Lines")->required();
  report->add_option("-o,--output", o->output, "the HTML file to write")->capture_default_str();
  report->add_option(
      "--trace", o->trace,
      "the run's trace (sluice demo --trace, PipelineOptions::trace): a timeline of a window of "
      "the run, each thread a row, each node's slices in its color");
  return {report, [o] { return write_report(*o); }};
}

}  // namespace sluice::tools
