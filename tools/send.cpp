// `sluice send ENDPOINT FILE.npy...`: each file as one message of one
// tensor (seq 0, 1, ...), then end of stream. Reliable by default: it
// exits 0 only once the receiver has acknowledged everything, and non-zero
// naming how many messages were not delivered otherwise. SIGINT or SIGTERM
// stop it after the message being sent: the end of stream follows, and it
// exits 130 (some files were not sent).

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <sluice/io/channel.h>
#include <sluice/io/npy.h>
#include "tools/commands.h"
#include "tools/stop_signals.h"

namespace sluice::tools {
namespace {

struct SendOptions {
  std::string endpoint;
  std::vector<std::string> files;
  uint64_t stream_id = 0;
  bool crc = false;
  bool plain = false;
  CurveOptions curve;
  double timeout = 60;  // seconds to wait for a receiver (reliable) or to deliver after the last send (plain)
};

int send(const SendOptions& o) {
  // Every file is read before anything is sent: a bad file sends nothing.
  std::vector<Tensor> tensors;
  for (const std::string& f : o.files) tensors.push_back(npy::load(f));
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout * 1000));
  ChannelOptions options;
  options.delivery = o.plain ? Delivery::Plain : Delivery::Reliable;
  options.crc = o.crc;
  options.peer_timeout = timeout;
  options.linger = o.plain ? timeout : std::chrono::milliseconds(2000);
  options.curve = o.curve;
  StopSignals stop;
  Channel channel(Pattern::Push, o.endpoint, options);
  uint64_t seq = 0;  // files the channel took
  try {
    for (; seq < tensors.size() && !stop.requested(); ++seq) channel.send({tensors[seq]}, seq, o.stream_id);
    channel.send_end_of_stream(seq, o.stream_id);
    channel.flush(timeout);
  } catch (const WireError& e) {
    // The channel counts what it took; the files it never took were not
    // delivered either.
    const uint64_t kept = channel.counters().unacknowledged;
    const uint64_t kept_files = std::min<uint64_t>(kept, seq);  // the end of stream may be among them
    std::cerr << "sluice send: " << e.what() << "; " << kept_files + (tensors.size() - seq) << " of "
              << tensors.size() << " file(s) not delivered: " << kept_files << " sent and not acknowledged, "
              << tensors.size() - seq << " never sent\n";
    return kExitFailed;
  }
  if (seq < tensors.size()) {
    std::cerr << "sluice send: stopped by a signal after " << seq << " of " << tensors.size() << " files\n";
    return kExitInterrupted;
  }
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
  cmd->add_flag("--plain", o->plain,
                "plain ZeroMQ for a raw PULL peer: nothing is acknowledged, so a loss goes unnoticed");
  // Each needs the other: a server key without this side's would send in plaintext.
  CLI::Option* secret = cmd->add_option("--curve-secret", o->curve.secret, "CurveZMQ: this sender's secret certificate (sluice keygen)")
      ->check(CLI::ExistingFile);
  CLI::Option* server = cmd->add_option("--curve-server", o->curve.server, "CurveZMQ: the receiver's public certificate")
      ->check(CLI::ExistingFile);
  secret->needs(server);
  server->needs(secret);
  cmd->add_option("--timeout", o->timeout,
                  "seconds to wait for a receiver that is absent or silent (plain: to deliver after the last send)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  return {cmd, [o] { return send(*o); }};
}

}  // namespace sluice::tools
