#pragma once
// The subcommands of the `sluice` program. Each adds itself to the app and
// runs from its own callback; errors propagate as sluice::Error.

namespace CLI {
class App;
}

namespace sluice::tools {

// `sluice demo`: trace, compile and run a small function and print the result.
void add_demo_command(CLI::App& app);

}  // namespace sluice::tools
