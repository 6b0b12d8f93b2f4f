#pragma once
// The subcommands of the `sluice` program, one file each. Each adds itself
// to the app and returns what runs it once the command line is parsed.
// Errors propagate as sluice::Error; main turns them into one line.

#include <functional>

namespace CLI {
class App;
}

namespace sluice::tools {

// A subcommand and what runs it once it is parsed, returning the program's exit status.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};

// Exit statuses every subcommand shares.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // an error of sluice, or the demo's detector did not learn
inline constexpr int kExitUsage = 2;   // a bad command line
inline constexpr int kExitInterrupted = 130;  // stopped by SIGINT or SIGTERM before it was done (128 + SIGINT)

// `sluice devices`: the clients and devices of this machine, with their options.
Command add_devices_command(CLI::App& app);
// `sluice demo`: the sensor monitor, as three processes or one.
Command add_demo_command(CLI::App& app);
// `sluice cat ENDPOINT`: one line per wire-format message received.
Command add_cat_command(CLI::App& app);
// `sluice send ENDPOINT FILE.npy...`: .npy files as messages, then end of stream.
Command add_send_command(CLI::App& app);
// `sluice update ENDPOINT STAGE FILE.npy...`: a live update of a stage's accumulator.
Command add_update_command(CLI::App& app);
// `sluice keygen NAME`: a CurveZMQ key pair as certificate files.
Command add_keygen_command(CLI::App& app);
// `sluice report RUN.jsonl -o report.html`: a run log as an HTML page of charts.
Command add_report_command(CLI::App& app);
// `sluice graph`: the demo's pipeline as a picture (DOT or Mermaid).
Command add_graph_command(CLI::App& app);
// `sluice trace merge OUT IN...`: processes' trace files as one timeline.
Command add_trace_command(CLI::App& app);

}  // namespace sluice::tools
