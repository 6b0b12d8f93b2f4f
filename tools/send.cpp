// `sluice send ENDPOINT FILE.npy...`: each file as one message of one
// tensor (seq 0, 1, ...), then end of stream.

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "io/channel.h"
#include "io/npy.h"
#include "tools/commands.h"

namespace sluice::tools {
namespace {

struct SendOptions {
  std::string endpoint;
  std::vector<std::string> files;
  uint64_t stream_id = 0;
  bool crc = false;
  double linger = 10;  // seconds to keep trying to deliver after the last send
};

int send(const SendOptions& o) {
  // Every file is read before anything is sent: a bad file sends nothing.
  std::vector<Tensor> tensors;
  for (const std::string& f : o.files) tensors.push_back(npy::load(f));
  ChannelOptions options;
  options.crc = o.crc;
  options.linger = std::chrono::milliseconds(static_cast<int64_t>(o.linger * 1000));
  Channel channel(Pattern::Push, o.endpoint, options);
  uint64_t seq = 0;
  for (const Tensor& t : tensors) channel.send({t}, seq++, o.stream_id);
  channel.send_end_of_stream(seq, o.stream_id);
  return kExitOk;
}

}  // namespace

Command add_send_command(CLI::App& app) {
  auto o = std::make_shared<SendOptions>();
  CLI::App* cmd =
      app.add_subcommand("send", "send .npy files as tensors, one message each, then end of stream");
  cmd->add_option("endpoint", o->endpoint,
                  "ZeroMQ address (ipc:///path, tcp://host:port); connects unless it starts with '@'")
      ->required();
  cmd->add_option("files", o->files, ".npy files, sent in this order")->required()->check(CLI::ExistingFile);
  cmd->add_option("--stream-id", o->stream_id, "the stream id of every message")->capture_default_str();
  cmd->add_flag("--crc", o->crc, "send a CRC-32C of each message's data");
  cmd->add_option("--linger", o->linger, "seconds to keep delivering after the last send")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  return {cmd, [o] { return send(*o); }};
}

}  // namespace sluice::tools
