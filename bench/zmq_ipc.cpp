// Tensors from one process to another over ipc: a sluice Channel (the wire
// format: a header frame, an .npy header frame and the data per message)
// against raw libzmq PUSH/PULL sending the same data bytes as one frame.
// Another process, bench_zmq_ipc_peer, sends; this one receives and times.
//   zmq_ipc_1MiB  1 MiB f32 tensors: bandwidth, sluice / raw
//   zmq_ipc_64B   64-byte f32 tensors: messages per second, sluice / raw
// Each trial starts a fresh sender, takes its first message untimed (start-up
// and connection), then times the rest; the ratio is raw time / sluice time.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include "io/channel.h"

extern char** environ;

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kTimeout{10000};

std::string peer_program() {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "bench_zmq_ipc_peer").string();
}

// The sending process of one trial, killed if it outlives a failed one. It
// exits only once told that everything arrived: a sender that closes its
// ipc socket while the receiver lags can lose what it queued last, linger
// or not (libzmq issue #4660).
class Peer {
 public:
  Peer(const std::string& mode, const std::string& endpoint, size_t bytes, long count)
      : ack_endpoint_(endpoint + "-ack-" + std::to_string(++trials_)) {
    ack_ = zmq_socket(ack_context(), ZMQ_PUSH);
    if (zmq_bind(ack_, ack_endpoint_.c_str()) != 0) throw std::runtime_error("cannot bind " + ack_endpoint_);
    std::vector<std::string> args = {peer_program(),        mode,         endpoint, std::to_string(bytes),
                                     std::to_string(count), ack_endpoint_};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("cannot start " + args[0]);
  }
  ~Peer() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    zmq_close(ack_);
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  // Everything arrived: lets the peer exit, and checks that it succeeded.
  void finish() {
    if (zmq_send(ack_, "", 0, 0) != 0) throw std::runtime_error("cannot acknowledge the peer");
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("bench_zmq_ipc_peer failed");
  }

 private:
  static void* ack_context() {
    static void* context = zmq_ctx_new();
    return context;
  }
  static inline int trials_ = 0;
  std::string ack_endpoint_;
  void* ack_ = nullptr;
  pid_t pid_ = -1;
};

// A path of its own for each receiver: a closed socket unlinks its path
// later, possibly after another socket has bound the same one.
std::string ipc_endpoint(const std::string& name, size_t bytes) {
  return "ipc://" + (std::filesystem::temp_directory_path() /
                     ("sluice-bench-" + std::to_string(getpid()) + "-" + name + "-" + std::to_string(bytes)))
                        .string();
}

// The receiving end through sluice: a Channel bound once for every trial.
class SluiceReceiver {
 public:
  explicit SluiceReceiver(size_t bytes)
      : endpoint_(ipc_endpoint("sluice", bytes)), bytes_(bytes), pull_(Pattern::Pull, "@" + endpoint_) {}

  // Seconds per message over `count` - 1 messages; the first one's data in *first.
  double trial(long count, std::vector<float>* first = nullptr) {
    Peer peer("sluice", endpoint_, bytes_, count);
    Tensor t = next();
    if (first) first->assign(t.data<float>().begin(), t.data<float>().end());
    auto start = Clock::now();
    for (long i = 1; i < count; ++i) next();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::optional<wire::Message> end = pull_.recv(kTimeout);
    if (!end || end->header.kind != wire::Kind::EndOfStream)
      throw std::runtime_error("sluice: no end of stream");
    peer.finish();
    return seconds / static_cast<double>(std::max(count - 1, 1L));
  }

 private:
  Tensor next() {
    std::optional<wire::Message> m = pull_.recv(kTimeout);
    if (!m || m->tensors.size() != 1 || m->tensors[0].spec().bytes() != static_cast<int64_t>(bytes_))
      throw std::runtime_error("sluice: a message is missing or wrong");
    return m->tensors[0];
  }

  std::string endpoint_;
  size_t bytes_;
  Channel pull_;
};

// How the raw libzmq sender frames a tensor.
enum class RawFraming {
  OneFrame,    // the tensor's bytes alone: the baseline of the rows
  WireFrames,  // the frames sluice puts on the wire, sent as plain bytes
};

// The receiving end in raw libzmq: one PULL socket, one reused message.
class RawReceiver {
 public:
  RawReceiver(size_t bytes, RawFraming framing)
      : endpoint_(ipc_endpoint(framing == RawFraming::OneFrame ? "raw" : "raw-wire", bytes)),
        bytes_(bytes),
        framing_(framing) {
    ctx_ = zmq_ctx_new();
    pull_ = zmq_socket(ctx_, ZMQ_PULL);
    int timeout_ms = static_cast<int>(kTimeout.count());
    zmq_setsockopt(pull_, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    if (zmq_bind(pull_, endpoint_.c_str()) != 0) throw std::runtime_error("raw: bind failed");
    zmq_msg_init(&msg_);
  }
  ~RawReceiver() {
    zmq_msg_close(&msg_);
    zmq_close(pull_);
    zmq_ctx_term(ctx_);
  }
  RawReceiver(const RawReceiver&) = delete;
  RawReceiver& operator=(const RawReceiver&) = delete;

  double trial(long count, std::vector<float>* first = nullptr) {
    Peer peer(framing_ == RawFraming::OneFrame ? "raw" : "raw-wire", endpoint_, bytes_, count);
    next();
    if (first) {
      const auto* f = static_cast<const float*>(zmq_msg_data(&msg_));
      first->assign(f, f + bytes_ / sizeof(float));
    }
    auto start = Clock::now();
    for (long i = 1; i < count; ++i) next();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (zmq_msg_recv(&msg_, pull_, 0) != 0) throw std::runtime_error("raw: no end marker");
    peer.finish();
    return seconds / static_cast<double>(std::max(count - 1, 1L));
  }

 private:
  // One message: its frames, the tensor's bytes last.
  void next() {
    int got = 0;
    do {
      got = zmq_msg_recv(&msg_, pull_, 0);
      if (got < 0) throw std::runtime_error(std::string("raw: no message: ") + zmq_strerror(zmq_errno()));
    } while (zmq_msg_more(&msg_));
    if (got != static_cast<int>(bytes_))
      throw std::runtime_error("raw: expected a message of " + std::to_string(bytes_) + " bytes, found " +
                               std::to_string(got));
  }

  std::string endpoint_;
  size_t bytes_;
  RawFraming framing_;
  void* ctx_ = nullptr;
  void* pull_ = nullptr;
  zmq_msg_t msg_;
};

// Interleaved trials of sluice and of the raw sender; the row `name` when
// framed as the rows' baseline, the ratio alone otherwise.
void run_benchmark(benchmark::State& state, const std::string& name, size_t bytes, long count, double goal,
                   RawFraming framing = RawFraming::OneFrame) {
  try {
    SluiceReceiver sluice_end(bytes);
    RawReceiver raw_end(bytes, framing);
    std::vector<float> via_sluice, via_raw;
    sluice_end.trial(2, &via_sluice);
    raw_end.trial(2, &via_raw);
    if (!check_close(state, via_sluice, via_raw, 0)) return;
    Samples s = interleave(
        state, [&] { return sluice_end.trial(count); }, [&] { return raw_end.trial(count); });
    if (framing == RawFraming::OneFrame) report_speedup(name, s, goal);
  } catch (const std::exception& e) { state.SkipWithError(e.what()); }
}

void BM_zmq_ipc_1MiB(benchmark::State& state) {
  run_benchmark(state, "zmq_ipc_1MiB", size_t{1} << 20, 400, 0.8);
}
BENCHMARK(BM_zmq_ipc_1MiB)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_zmq_ipc_64B(benchmark::State& state) { run_benchmark(state, "zmq_ipc_64B", 64, 200000, 0.5); }
BENCHMARK(BM_zmq_ipc_64B)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Not a row: how much of zmq_ipc_64B's gap is the wire format's three frames
// per message (header, .npy header, data) rather than the Channel. Its
// `speedup` counter is sluice against raw libzmq sending those same frames.
void BM_zmq_ipc_64B_vs_raw_wire_frames(benchmark::State& state) {
  run_benchmark(state, "", 64, 200000, 0, RawFraming::WireFrames);
}
BENCHMARK(BM_zmq_ipc_64B_vs_raw_wire_frames)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sluice::bench
