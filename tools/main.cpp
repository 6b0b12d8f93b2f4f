// sluice: the command-line program. Usage errors print one line and exit
// with status 2; errors of sluice itself print one line and exit with 1.

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "ops/error.h"
#include "tools/commands.h"

namespace {

constexpr int kUsageError = 2;
constexpr int kRunError = 1;

// CLI11 messages may span lines; a usage error is promised to be one.
std::string one_line(std::string message) {
  for (char& c : message)
    if (c == '\n') c = ' ';
  return message;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sluice: streams tensors through compiled computations.", "sluice"};
  app.set_version_flag("--version", SLUICE_VERSION);
  sluice::tools::add_demo_command(app);
  // Not require_subcommand: CLI11 would then call an unknown subcommand a
  // missing one instead of naming it.
  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      std::cerr << "sluice: a subcommand is required (see sluice --help)\n";
      return kUsageError;
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    std::cerr << "sluice: " << one_line(e.what()) << " (see sluice --help)\n";
    return kUsageError;
  } catch (const sluice::Error& e) {
    std::cerr << "sluice: " << one_line(e.what()) << "\n";
    return kRunError;
  }
  return 0;
}
