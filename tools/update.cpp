// `sluice update ENDPOINT STAGE FILE.npy...`: a live update of a pipeline
// stage in another process. The files are the stage's new accumulator, one
// .npy per tensor in order; they travel as an update message to ENDPOINT,
// the address of a ZeroMQ source of the stage's pipeline, which applies
// them at its next checkpoint barrier (Pipeline::update). Exits 0 once the
// pipeline took the update, 1 when it refused it (the reason is printed:
// the stage is unknown, the specs differ, the pipeline places no barriers)
// or nothing answered within the timeout.

#include <chrono>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <sluice/io/channel.h>
#include <sluice/io/npy.h>
#include "tools/commands.h"

namespace sluice::tools {
namespace {

struct UpdateOptions {
  std::string endpoint, stage;
  std::vector<std::string> files;
  double timeout = 30;
  CurveOptions curve;
};

int update(const UpdateOptions& o) {
  std::vector<Tensor> acc;
  for (const std::string& f : o.files) acc.push_back(npy::load(f));
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout * 1000));
  ChannelOptions options;
  options.peer_timeout = timeout;
  options.curve = o.curve;
  // A stream of its own: the source's other senders' streams, and their
  // positions in its checkpoints, stay as they are.
  const uint64_t stream_id = std::random_device{}() | (uint64_t{std::random_device{}()} << 32) | 1;
  Channel channel(Pattern::Push, o.endpoint, options);
  channel.send_update(o.stage, acc, 0, stream_id);
  channel.flush(timeout);  // WireError (exit 1) when nothing took it
  for (const Refusal& r : channel.refusals()) {
    std::cerr << "sluice update: " << o.endpoint << " refused the update of stage '" << o.stage
              << "': " << r.why << "\n";
    return kExitFailed;
  }
  std::cout << "stage '" << o.stage << "': update taken by " << o.endpoint
            << "; it applies at the stage's next barrier\n";
  return kExitOk;
}

}  // namespace

Command add_update_command(CLI::App& app) {
  auto o = std::make_shared<UpdateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "update",
      "replace a running pipeline stage's accumulator (its weights) at its next barrier, from .npy files");
  cmd->add_option("endpoint", o->endpoint, "the address a ZeroMQ source of the stage's pipeline receives on")
      ->required();
  cmd->add_option("stage", o->stage, "the stage's name")->required();
  cmd->add_option("files", o->files, "the new accumulator: one .npy file per tensor, in order")
      ->required()
      ->check(CLI::ExistingFile);
  // Each needs the other: a server key without this side's would send in plaintext.
  CLI::Option* secret = cmd->add_option("--curve-secret", o->curve.secret,
                  "CurveZMQ: this sender's secret certificate (sluice keygen)")
      ->check(CLI::ExistingFile);
  CLI::Option* server = cmd->add_option("--curve-server", o->curve.server, "CurveZMQ: the receiver's public certificate")
      ->check(CLI::ExistingFile);
  secret->needs(server);
  server->needs(secret);
  cmd->add_option("--timeout", o->timeout, "seconds to wait for the pipeline to take the update")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  return {cmd, [o] { return update(*o); }};
}

}  // namespace sluice::tools
