// `sluice devices`: what this machine offers sluice. One block per
// platform: its client's options, then each device with what it can run.

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <sluice/devices/backend.h>
#include "tools/commands.h"

namespace sluice::tools {
namespace {

// What a backend lacks of the catalogue: ops, dtypes, and op/dtype pairs it
// declines ("tanh(c64)"); "nothing" for one that runs all of it.
std::string lacking(const Capabilities& caps) {
  std::string ops, dtypes, pairs;
  for (int i = 0; i < kOpCount; ++i)
    if (!caps.supports(static_cast<Op>(i))) ops += (ops.empty() ? "" : " ") + std::string(op_name(static_cast<Op>(i)));
  for (int i = 0; i < kDTypeCount; ++i)
    if (!caps.supports(static_cast<DType>(i)))
      dtypes += (dtypes.empty() ? "" : " ") + std::string(dtype_name(static_cast<DType>(i)));
  for (auto [op, dtype] : caps.declined)
    pairs += fmt::format("{}{}({})", pairs.empty() ? "" : " ", op_name(op), dtype_name(dtype));
  std::string s;
  if (!ops.empty()) s += "\n    ops: " + ops;
  if (!dtypes.empty()) s += "\n    dtypes: " + dtypes;
  if (!pairs.empty()) s += "\n    op(operand dtype): " + pairs;
  return s.empty() ? " nothing" : s;
}

// The blocks (ops/block.h) a backend runs with a kernel of its own.
std::string native_blocks(const Capabilities& caps) {
  std::string s;
  for (const std::string& b : caps.native_blocks) s += (s.empty() ? "" : " ") + b;
  return s.empty() ? "none (every block runs its fallback)" : s;
}

int list_devices() {
  const std::vector<std::string> here = platforms();
  for (const std::string& platform : here) {
    Client& c = client(platform);
    std::cout << platform << ": " << c.device_count() << (c.device_count() == 1 ? " device" : " devices") << " ("
              << c.options_str() << ")\n";
    Capabilities caps = c.capabilities();
    std::string dtypes;
    for (DType t : caps.dtypes) dtypes += (dtypes.empty() ? "" : " ") + std::string(dtype_name(t));
    for (int id = 0; id < c.device_count(); ++id)
      std::cout << "  " << c.device(id).str() << (id == c.options().default_device_id ? " (default)" : "") << ": "
                << caps.ops.size() << " ops; dtypes " << dtypes << "\n";
    std::cout << "  lacks:" << lacking(caps) << "\n  native blocks: " << native_blocks(caps) << "\n";
  }
  for (const std::string& platform : known_platforms())
    if (std::find(here.begin(), here.end(), platform) == here.end()) {
      const Capabilities caps = platform_capabilities(platform);
      std::cout << platform << ": not available on this machine\n  lacks:" << lacking(caps)
                << "\n  native blocks: " << native_blocks(caps) << "\n";
    }
  return kExitOk;
}

}  // namespace

Command add_devices_command(CLI::App& app) {
  CLI::App* devices =
      app.add_subcommand("devices", "list the clients and devices of this machine, with their options");
  return {devices, list_devices};
}

}  // namespace sluice::tools
