// `sluice keygen NAME`: a CurveZMQ key pair as ZeroMQ certificate files,
// NAME (the public key, to hand to peers) and NAME_secret (both keys, mode
// 0600), in the format CZMQ's zcert writes.

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <sluice/io/curve.h>
#include <sluice/base/error.h>
#include "tools/commands.h"

namespace sluice::tools {
namespace {

struct KeygenOptions {
  std::string name;
  bool force = false;
};

int keygen(const KeygenOptions& o) {
  for (const std::string& path : {o.name, o.name + "_secret"})
    if (!o.force && std::filesystem::exists(path))
      throw WireError(error_message("keygen: " + path, "", "a new file", "one (--force replaces it)"));
  curve::KeyPair keys = curve::generate();
  curve::save(o.name, keys);
  std::cout << keys.public_key << "\n";
  return kExitOk;
}

}  // namespace

Command add_keygen_command(CLI::App& app) {
  auto o = std::make_shared<KeygenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "keygen", "write a CurveZMQ key pair: NAME (public certificate) and NAME_secret; prints the public key");
  cmd->add_option("name", o->name, "path of the certificate files, without _secret")->required();
  cmd->add_flag("--force", o->force, "replace existing files");
  return {cmd, [o] { return keygen(*o); }};
}

}  // namespace sluice::tools
