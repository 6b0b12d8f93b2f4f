// `sluice devices`: what this machine offers sluice. One block per
// platform: its client's options, then each device with what it can run.

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include <sluice/devices/backend.h>
#include "tools/commands.h"

namespace sluice::tools {
namespace {

int list_devices() {
  const std::vector<std::string> here = platforms();
  for (const std::string& platform : here) {
    Client& c = client(platform);
    const ClientOptions& o = c.options();
    std::cout << platform << ": " << c.device_count() << (c.device_count() == 1 ? " device" : " devices")
              << " (default_device_id " << o.default_device_id << ", preallocate "
              << (o.preallocate ? "true" : "false") << ", memory_fraction " << o.memory_fraction
              << ", host_threads " << o.host_threads << ", raise_worker_limit "
              << (o.raise_worker_limit ? "true" : "false") << ", blas_threads " << o.blas_threads << ")\n";
    Capabilities caps = c.capabilities();
    std::string dtypes;
    for (DType t : caps.dtypes) dtypes += (dtypes.empty() ? "" : " ") + std::string(dtype_name(t));
    for (int id = 0; id < c.device_count(); ++id)
      std::cout << "  " << c.device(id).str() << (id == o.default_device_id ? " (default)" : "") << ": "
                << caps.ops.size() << " ops; dtypes " << dtypes << "\n";
  }
  for (const char* platform : {"cuda"})
    if (std::find(here.begin(), here.end(), platform) == here.end())
      std::cout << platform << ": not available on this machine\n";
  return kExitOk;
}

}  // namespace

Command add_devices_command(CLI::App& app) {
  CLI::App* devices =
      app.add_subcommand("devices", "list the clients and devices of this machine, with their options");
  return {devices, list_devices};
}

}  // namespace sluice::tools
