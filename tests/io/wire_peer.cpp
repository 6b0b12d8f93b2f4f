// The other process of the two-process and fault tests:
//
//   wire_peer produce ENDPOINT COUNT [--floats=N] [--capacity=N] [--credit-bytes=N] [--peer-timeout-ms=N]
//     runs a pipeline of COUNT messages (test::peer_message) into a ZeroMQ
//     sink connected to ENDPOINT; exits 0 once the receiver acknowledged
//     everything, 1 on any error (the reason on stderr).
//   wire_peer receive ENDPOINT COUNT LOG [--floats=N] [--hwm=N] [--sleep-us=N]
//     binds a reliable channel at ENDPOINT (its bound address written to
//     LOG.endpoint), checks every message bit for bit, appends its index to
//     LOG (a line "life" first), sleeps per message; exits 0 at the end of
//     stream with all COUNT taken in order, 3 when a message arrives out of
//     order or twice in this life, 1 on any error.
//   wire_peer shm-serve INDEX SEED [--uid=N]
//     (as user N, when given) puts test::random_tensor(round_trip_specs()[INDEX],
//     SEED) in shared memory, prints its ipc handle on a line, and waits
//     to be killed (at most 120 s).
//   wire_peer shm-open HANDLES SEED [--hold=1]
//     for each line "INDEX HANDLE" of the file HANDLES: from_pointer, and
//     exit 4 unless the tensor is random_tensor(spec, SEED) bit for bit,
//     exit 5 unless its view is the sender's memfd mapped read-only (no
//     copy, no write-through); prints "mapped", and with --hold waits to be
//     killed (at most 120 s).
//   wire_peer shm-send ENDPOINT COUNT [--floats=N] [--peer-timeout-ms=N]
//     a reliable channel to ENDPOINT sends COUNT test::peer_message tensors
//     written in shared memory (Tensor::to_shared), then the end of stream;
//     flushes, prints how many went as shared references, exits 0.
//   wire_peer aligned-sum ENDPOINT DIR OUT [--sleep-us=N]
//     a pipeline fed by two senders (messages {s64 stream, s64 i}, their
//     barriers aligned) whose stage sums count, i and i*i over both; it
//     stores checkpoints in DIR and restores from them first (printing
//     "resumed N"), sleeps per message in its sink, and at the end of both
//     streams writes "count sum squares" to OUT and exits 0.

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <sluice/io/channel.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/zmq_nodes.h>
#include "tests/io/wire_test_util.h"

namespace {

using namespace sluice;

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, int64_t> flags;
  int64_t flag(const std::string& name, int64_t fallback) const {
    auto it = flags.find(name);
    return it == flags.end() ? fallback : it->second;
  }
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) == 0 && s.find('=') != std::string::npos) {
      a.flags[s.substr(2, s.find('=') - 2)] = std::stoll(s.substr(s.find('=') + 1));
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

void append_line(int fd, const std::string& line) {
  std::string l = line + "\n";
  if (::write(fd, l.data(), l.size()) != static_cast<ssize_t>(l.size())) throw std::runtime_error("log write failed");
}

int produce(const Args& a) {
  const uint64_t count = std::stoull(a.positional.at(2));
  const int64_t floats = a.flag("floats", 16);
  uint64_t next = 0;
  Pipeline p({.capacity = static_cast<size_t>(a.flag("capacity", 64))});
  auto messages = p.source("messages", sources::generator(test::peer_message_spec(floats), [&]() -> std::optional<Tensors> {
    if (next == count) return std::nullopt;
    return test::peer_message(next++, floats);
  }));
  ZmqSinkOptions options;
  options.channel.credit_bytes = static_cast<uint64_t>(a.flag("credit-bytes", int64_t{256} << 20));
  options.channel.peer_timeout = std::chrono::milliseconds(a.flag("peer-timeout-ms", 60000));
  options.finish_timeout = options.channel.peer_timeout;
  p.connect(messages, p.sink("send", sinks::zmq(">" + a.positional.at(1), options)));
  p.run();
  return 0;
}

int receive(const Args& a) {
  const uint64_t count = std::stoull(a.positional.at(2));
  const std::string log = a.positional.at(3);
  const int64_t floats = a.flag("floats", 16);
  const auto sleep = std::chrono::microseconds(a.flag("sleep-us", 0));
  ChannelOptions options;
  options.recv_high_water_mark = static_cast<int>(a.flag("hwm", 1000));
  options.shared_memory = a.flag("shared-memory", 1) != 0;
  Channel in(Pattern::Pull, "@" + a.positional.at(1), options);
  {
    std::ofstream(log + ".endpoint.tmp") << in.bound_endpoint() << "\n";
    std::rename((log + ".endpoint.tmp").c_str(), (log + ".endpoint").c_str());
  }
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + log);
  append_line(fd, "life");
  std::optional<uint64_t> next;
  for (;;) {
    std::optional<wire::Message> m = in.recv(std::chrono::milliseconds(120000));
    if (!m) throw std::runtime_error("nothing for 120 s");
    if (m->header.kind == wire::Kind::EndOfStream) {
      if (next.value_or(0) != count) {
        std::fprintf(stderr, "wire_peer: end of stream after %llu of %llu\n",
                     static_cast<unsigned long long>(next.value_or(0)), static_cast<unsigned long long>(count));
        return 3;
      }
      // How many came through a same-host ring, a line per life that ended.
      std::ofstream(log + ".ringed", std::ios::app) << in.counters().ringed << "\n";
      return 0;
    }
    if (m->header.kind != wire::Kind::Data) throw std::runtime_error("unexpected " + m->error);
    const auto i = static_cast<uint64_t>(m->tensors.at(1).data<int64_t>()[0]);
    if (next && i != *next) {
      std::fprintf(stderr, "wire_peer: message %llu where %llu was due\n", static_cast<unsigned long long>(i),
                   static_cast<unsigned long long>(*next));
      return 3;
    }
    std::vector<Tensor> want = test::peer_message(i, floats);
    if (!test::identical(m->tensors.at(0), want[0])) throw std::runtime_error("message " + std::to_string(i) + ": bits differ");
    append_line(fd, std::to_string(i));
    next = i + 1;
    if (sleep.count() > 0) std::this_thread::sleep_for(sleep);
  }
}

[[noreturn]] void wait_to_be_killed() {
  std::this_thread::sleep_for(std::chrono::seconds(120));
  std::exit(5);
}

int shm_serve(const Args& a) {
  if (a.flags.count("uid") && ::setuid(static_cast<uid_t>(a.flag("uid", 0))) != 0)
    throw std::runtime_error("setuid failed");
  const Spec spec = test::round_trip_specs().at(std::stoul(a.positional.at(1)));
  Tensor t = test::random_tensor(spec, static_cast<uint32_t>(std::stoul(a.positional.at(2)))).to_shared();
  TensorPointer p = t.to_pointer({.mode = PointerMode::Ipc, .require_shared = true});
  std::printf("%s\n", p.handle.c_str());
  std::fflush(stdout);
  wait_to_be_killed();
}

int shm_open(const Args& a) {
  std::ifstream in(a.positional.at(1));
  const auto seed = static_cast<uint32_t>(std::stoul(a.positional.at(2)));
  std::vector<Tensor> views;
  size_t index;
  std::string handle;
  while (in >> index >> handle) {
    const Spec spec = test::round_trip_specs().at(index);
    Tensor t = from_pointer({.mode = PointerMode::Ipc, .handle = handle}, spec);
    if (!test::identical(t, test::random_tensor(spec, seed))) {
      std::fprintf(stderr, "wire_peer: %s: bits differ\n", spec.str().c_str());
      return 4;
    }
    const std::string mapping = test::mapping_of(t.to_pointer().address);
    if (mapping.rfind("r--s /memfd:sluice", 0) != 0) {
      std::fprintf(stderr, "wire_peer: %s: mapped as '%s', expected the sender's memfd read-only (r--s)\n",
                   spec.str().c_str(), mapping.c_str());
      return 5;
    }
    views.push_back(t);
  }
  std::printf("mapped %zu\n", views.size());
  std::fflush(stdout);
  if (a.flag("hold", 0)) wait_to_be_killed();
  return 0;
}

int shm_send(const Args& a) {
  const uint64_t count = std::stoull(a.positional.at(2));
  const int64_t floats = a.flag("floats", 16);
  ChannelOptions options;
  options.peer_timeout = std::chrono::milliseconds(a.flag("peer-timeout-ms", 60000));
  Channel out(Pattern::Push, ">" + a.positional.at(1), options);
  for (uint64_t i = 0; i < count; ++i) {
    std::vector<Tensor> m = test::peer_message(i, floats);
    m[0] = m[0].to_shared();
    out.send(m, i);
  }
  out.send_end_of_stream(count);
  out.flush(options.peer_timeout);
  std::printf("shared %llu\n", static_cast<unsigned long long>(out.counters().shared));
  return 0;
}

int aligned_sum(const Args& a) {
  const std::string endpoint = a.positional[1], dir = a.positional[2], out = a.positional[3];
  const auto sleep = std::chrono::microseconds(a.flag("sleep-us", 0));
  PipelineOptions options;
  options.checkpoint_dir = dir;
  Pipeline p(options);
  ZmqSourceOptions source;
  source.expected_peers = 2;
  source.channel.continue_streams = true;
  source.channel.peer_timeout = std::chrono::seconds(30);
  auto in = sources::zmq("@" + endpoint, {s64(), s64()}, source);
  auto sum = p.stage(
      "sum",
      [](Expr stream, Expr i, Expr count, Expr total, Expr squares) {
        return tuple(stream, count + 1, total + i, squares + i * i);
      },
      {.acc = {scalar(int64_t{0}), scalar(int64_t{0}), scalar(int64_t{0})}});
  p.connect(p.source("in", in), sum);
  p.connect(sum, p.sink("slow", [sleep](const Tensors&) { std::this_thread::sleep_for(sleep); }));
  const RestoreReport restored = p.restore();
  std::printf("resumed %lld\n", static_cast<long long>(restored.checkpoint));
  std::fflush(stdout);
  const PipelineResult r = p.run();
  const Tensors& acc = r.accumulators.at("sum");
  std::ofstream(out) << acc[0].to_vector<int64_t>()[0] << " " << acc[1].to_vector<int64_t>()[0] << " "
                     << acc[2].to_vector<int64_t>()[0] << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  const std::string mode = a.positional.empty() ? "" : a.positional[0];
  try {
    if (mode == "produce" && a.positional.size() == 3) return produce(a);
    if (mode == "receive" && a.positional.size() == 4) return receive(a);
    if (mode == "shm-serve" && a.positional.size() == 3) return shm_serve(a);
    if (mode == "shm-open" && a.positional.size() == 3) return shm_open(a);
    if (mode == "shm-send" && a.positional.size() == 3) return shm_send(a);
    if (mode == "aligned-sum" && a.positional.size() == 4) return aligned_sum(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wire_peer: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: wire_peer produce ENDPOINT COUNT [--floats=N] [--capacity=N] [--credit-bytes=N] "
               "[--peer-timeout-ms=N]\n       wire_peer receive ENDPOINT COUNT LOG [--floats=N] [--hwm=N] "
               "[--sleep-us=N] [--shared-memory=0]\n"
               "       wire_peer shm-serve INDEX SEED [--uid=N]\n       wire_peer shm-open HANDLES SEED "
               "[--hold=1]\n       wire_peer shm-send ENDPOINT COUNT [--floats=N] [--peer-timeout-ms=N]\n"
               "       wire_peer aligned-sum ENDPOINT DIR OUT [--sleep-us=N]\n");
  return 2;
}
