// `sluice send ENDPOINT FILE.npy...`: each file as one message of one
// tensor (seq 0, 1, ...), then end of stream. Reliable by default: it
// exits 0 only once the receiver has acknowledged everything, and non-zero
// naming how many messages were not delivered otherwise. SIGINT or SIGTERM
// stop it after the message being sent: the end of stream follows, and it
// exits 130 (some files were not sent).

#include <algorithm>
#include <charconv>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
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
  std::vector<std::string> tags;  // KEY=VALUE or KEY@ROW=VALUE, on every message
  double timeout = 60;  // seconds to wait for a receiver (reliable) or to deliver after the last send (plain)
};

// KEY=VALUE (the whole message) or KEY@ROW=VALUE: an integer, else a
// float, else text. ValueError naming the tag when it is neither form.
void parse_tag(const std::string& text, Tags& tags) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ValueError(fmt::format("--tag: expected KEY=VALUE or KEY@ROW=VALUE, found '{}'", text));
  std::string key = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  int64_t row = Tag::kWhole;
  if (const size_t at = key.find('@'); at != std::string::npos) {
    const std::string r = key.substr(at + 1);
    auto [end, ec] = std::from_chars(r.data(), r.data() + r.size(), row);
    if (ec != std::errc() || end != r.data() + r.size() || row < 0)
      throw ValueError(fmt::format("--tag '{}': expected a row of 0 or more after '@', found '{}'", text, r));
    key.resize(at);
  }
  int64_t i = 0;
  double d = 0;
  const char* first = value.data();
  const char* last = value.data() + value.size();
  if (auto [end, ec] = std::from_chars(first, last, i); ec == std::errc() && end == last && !value.empty()) {
    tags.set(std::move(key), i, row);
  } else if (auto [dend, dec] = std::from_chars(first, last, d);
             dec == std::errc() && dend == last && !value.empty()) {
    tags.set(std::move(key), d, row);
  } else {
    tags.set(std::move(key), value, row);
  }
}

int send(const SendOptions& o) {
  // Every file and tag is read before anything is sent: a bad one sends nothing.
  std::vector<Tensor> tensors;
  for (const std::string& f : o.files) tensors.push_back(npy::load(f));
  Tags tags;
  for (const std::string& t : o.tags) parse_tag(t, tags);
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
    for (; seq < tensors.size() && !stop.requested(); ++seq) {
      wire::Message m;
      m.header = {wire::Kind::Data, 0, o.stream_id, seq, 0, 0};
      m.tensors = {tensors[seq]};
      m.tags = tags;
      channel.send(m);
    }
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
  cmd->add_option(
      "--tag", o->tags,
      "a tag on every message, KEY=VALUE or KEY@ROW=VALUE (an integer, a float, else text); repeatable");
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
