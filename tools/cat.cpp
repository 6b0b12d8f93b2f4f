// `sluice cat ENDPOINT`: receives wire-format messages and prints one line
// each, like kafkacat for tensors:
//   stream 0 seq 3: f32[16][1024] min -2.31 max 2.57 mean 0.00121 | s64[] min 7 max 7 mean 7
// then its tags, if it has any:  ; tags time_ns=1700000000 clock=monotonic event@12=3
// The statistics are computed by a function compiled once per spec.

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <sluice/devices/backend.h>
#include <sluice/io/channel.h>
#include <sluice/ops/ops.h>
#include "tools/commands.h"

namespace sluice::tools {
namespace {

struct CatOptions {
  std::string endpoint;
  std::string pattern = "pull";
  int64_t count = 0;    // data messages to print; 0: until end of stream
  double timeout = -1;  // seconds to wait for a message; negative: forever
  double peer_timeout = 60;  // seconds a sender silent mid-stream has to come back
  bool plain = false;
  CurveOptions curve;
};

// min, max and mean as f64 scalars; complex tensors by magnitude.
Executable stats_of(const Spec& spec) {
  Function f = trace({spec}, [&spec](Expr x) {
    Expr v = as_type(is_complex(spec.dtype) ? abs(x) : x, DType::F64);
    return tuple(reduce_min(v), reduce_max(v), sum(v) / static_cast<double>(spec.size()));
  });
  return compile(f, host());  // cached: one compile per spec
}

std::string describe(const Tensor& t) {
  std::string line = t.spec().str();
  if (t.size() == 0) return line + " empty";
  std::vector<Tensor> stats = stats_of(t.spec()).run({t});
  return line + fmt::format(" min {:.6g} max {:.6g} mean {:.6g}", stats[0].to_vector<double>()[0],
                            stats[1].to_vector<double>()[0], stats[2].to_vector<double>()[0]);
}

// A tag's value as cat prints it: a tensor by its spec.
std::string describe(const TagValue& v) {
  switch (v.index()) {
    case 0: return std::to_string(std::get<int64_t>(v));
    case 1: return fmt::format("{:.9g}", std::get<double>(v));
    case 2: return std::get<std::string>(v);
    default: return std::get<Tensor>(v).spec().str();
  }
}

std::string describe(const Tags& tags) {
  std::string line;
  for (const Tag& t : tags.all())
    line += " " + t.key + (t.offset == Tag::kWhole ? "" : "@" + std::to_string(t.offset)) + "=" +
            describe(t.value);
  return line.empty() ? line : "; tags" + line;
}

int cat(const CatOptions& o) {
  // Reliable (pull): each message is acknowledged once its line is printed
  // (at the next receive, or as the channel closes after the last).
  Channel channel(o.pattern == "sub" ? Pattern::Sub : Pattern::Pull, o.endpoint,
                  {.delivery = o.plain ? Delivery::Plain : Delivery::Reliable,
                   .peer_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.peer_timeout * 1000)),
                   .curve = o.curve});
  const auto timeout = o.timeout < 0 ? std::chrono::milliseconds(-1)
                                     : std::chrono::milliseconds(static_cast<int64_t>(o.timeout * 1000));
  for (int64_t printed = 0; o.count == 0 || printed < o.count;) {
    std::optional<wire::Message> m = channel.recv(timeout);
    if (!m) {
      std::cerr << "sluice cat: no message on " << o.endpoint << " for " << o.timeout << " s\n";
      return kExitFailed;
    }
    std::cout << "stream " << m->header.stream_id << " seq " << m->header.seq << ": ";
    switch (m->header.kind) {
      case wire::Kind::EndOfStream: std::cout << "end of stream" << std::endl; return kExitOk;
      case wire::Kind::Error: std::cout << "error: " << m->error << std::endl; return kExitFailed;
      case wire::Kind::Barrier: std::cout << "checkpoint barrier " << m->checkpoint << std::endl; break;
      default: {
        if (m->header.kind == wire::Kind::Update) std::cout << "update of '" << m->target << "': ";
        std::string line;
        for (const Tensor& t : m->tensors) line += (line.empty() ? "" : " | ") + describe(t);
        std::cout << (line.empty() ? "no tensors" : line) << describe(m->tags) << std::endl;
        ++printed;
      }
    }
  }
  return kExitOk;
}

}  // namespace

Command add_cat_command(CLI::App& app) {
  auto o = std::make_shared<CatOptions>();
  CLI::App* cmd = app.add_subcommand("cat",
                                     "receive wire-format messages and print one line each: stream, seq, and "
                                     "each tensor's spec, min, max, mean");
  cmd->add_option("endpoint", o->endpoint,
                  "ZeroMQ address (ipc:///path, tcp://host:port); binds unless it starts with '>'")
      ->required();
  cmd->add_option("--pattern", o->pattern,
                  "pull (one of a sender's receivers) or sub (every message published)")
      ->check(CLI::IsMember({"pull", "sub"}))
      ->capture_default_str();
  cmd->add_flag("--plain", o->plain, "plain ZeroMQ, for a raw PUSH or PUB peer (sub is always plain)");
  // Each needs the other: an allow-list without a key would admit plaintext senders.
  CLI::Option* secret =
      cmd->add_option("--curve-secret", o->curve.secret, "CurveZMQ: this receiver's secret certificate (sluice keygen)")
          ->check(CLI::ExistingFile);
  CLI::Option* allow =
      cmd->add_option("--curve-allow", o->curve.allow,
                      "CurveZMQ: a directory of the allowed senders' public certificates (needs --curve-secret)")
          ->check(CLI::ExistingDirectory);
  secret->needs(allow);
  allow->needs(secret);
  cmd->add_option("-n,--count", o->count, "stop after this many data messages (default: at end of stream)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--timeout", o->timeout, "give up (status 1) after this many seconds without a message")
      ->check(CLI::Range(0.001, 1e6));
  cmd->add_option("--peer-timeout", o->peer_timeout,
                  "fail (status 1) when a sender that went silent mid-stream, without its end of stream, has not "
                  "come back within this many seconds")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  return {cmd, [o] { return cat(*o); }};
}

}  // namespace sluice::tools
