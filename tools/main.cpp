// sluice: the command-line program. Usage errors (a malformed SLUICE_LOG
// among them) print one line and exit with status 2; errors while running
// print one line and exit with 1.

#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include <sluice/devices/backend.h>
#include <sluice/base/log_settings.h>
#include <sluice/base/error.h>
#include "sluice_revision.h"
#include "tools/commands.h"

namespace {

// CLI11 messages may span lines; a usage error is promised to be one.
std::string one_line(std::string message) {
  for (char& c : message)
    if (c == '\n') c = ' ';
  return message;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sluice::tools;
  CLI::App app{"sluice: streams tensors through compiled computations.", "sluice"};
  app.set_version_flag("--version", std::string("sluice ") + SLUICE_VERSION + " (git " + SLUICE_REVISION + ")");
  const Command commands[] = {add_demo_command(app),   add_devices_command(app), add_cat_command(app),
                              add_send_command(app),   add_update_command(app),  add_keygen_command(app),
                              add_report_command(app), add_graph_command(app),   add_trace_command(app)};
  // Not require_subcommand: CLI11 would then call an unknown subcommand a
  // missing one instead of naming it.
  try {
    app.parse(argc, argv);
    sluice::check_log_environment();
  } catch (const sluice::ConfigError& e) {
    std::cerr << "sluice: " << one_line(e.what()) << "\n";
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    std::cerr << "sluice: " << one_line(e.what()) << " (see sluice --help)\n";
    return kExitUsage;
  }
  try {
    for (const Command& command : commands)
      if (command.app->parsed()) return command.run();
  } catch (const std::exception& e) {  // sluice::Error, and what the system throws (a full disk, no memory)
    std::cerr << "sluice: " << one_line(e.what()) << "\n";
    return kExitFailed;
  }
  std::cerr << "sluice: a subcommand is required (see sluice --help)\n";
  return kExitUsage;
}
