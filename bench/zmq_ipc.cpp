// Tensors from one process to another over ipc (and tcp). Another process,
// bench_zmq_ipc_peer, sends; this one receives and times. Three senders:
//   reliable  a sluice Channel as a user gets it by default (reliable
//             delivery: credit, acknowledgements, heartbeats; a tensor below
//             pack_below travels packed in one frame; on this host,
//             through a ring in shared memory, a larger tensor's data in
//             shared memory, copied there from the tensor's own);
//   shared    the same, each message a new tensor computed whole into a
//             freshly allocated slot of shared memory (as a pipeline stage's
//             outputs are for a same-host edge), its slot given back when
//             the receiver lets go: nothing is copied after the kernel;
//   plain     a sluice Channel with Delivery::Plain (raw ZeroMQ PUSH/PULL
//             carrying the wire format, packed the same way);
//   raw       raw libzmq PUSH/PULL sending the tensor's bytes as one frame
//             (raw-computed: each message computed as shared's, into the
//             sender's own memory).
// Rows (ratio = baseline time / sluice time, higher is better):
//   zmq_ipc_1MiB       1 MiB f32 tensors, reliable against raw
//   zmq_ipc_64B        64-byte f32 tensors, reliable against raw
//   reliable_ipc_1MiB  1 MiB f32 tensors, reliable against plain: what
//                      reliability costs (both in frames: the receiver declines shared memory)
//   reliable_ipc_64B   64-byte f32 tensors, reliable (as a user gets it: over a
//                      same-host ring) against plain
//   shm_ipc_16MiB      16 MiB f32 tensors, shared against raw-computed; both
//                      receivers read a float of every 4 KiB page of each tensor
//   shm_ipc_64KiB      64 KiB f32 tensors, the same
//   tcp_64B            64-byte f32 tensors over tcp loopback, reliable (in
//                      frames, as between hosts) against raw
//   curve_tcp_1MiB     1 MiB f32 tensors over tcp loopback, reliable with
//                      CurveZMQ against reliable without: what encryption costs
//   hop_latency_64B    a 64-byte f32 tensor's round trip to another process
//                      and back (ping-pong), through two default channels
//                      (over a same-host ring each way) against two raw
//                      libzmq PUSH/PULL pairs (bench_zmq_ipc_peer echo, raw-echo)
// and, not a row, zmq_ipc_64B_plain: plain against raw, to tell the
// Channel's and the wire format's cost from the reliable protocol's.
// Each trial starts a fresh sender, takes its first message untimed (start-up
// and connection), then times the rest up to the last data message.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"
#include <sluice/io/channel.h>
#include <sluice/io/curve.h>

extern char** environ;

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kTimeout{10000};

std::string peer_program() {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "bench_zmq_ipc_peer").string();
}

// A path of its own for each receiver: a closed socket unlinks its path
// later, possibly after another socket has bound the same one.
std::string ipc_endpoint(const std::string& name, size_t bytes) {
  static int receivers = 0;
  return "ipc://" + (std::filesystem::temp_directory_path() /
                     ("sluice-bench-" + std::to_string(getpid()) + "-" + name + "-" + std::to_string(bytes) + "-" +
                      std::to_string(++receivers)))
                        .string();
}

// Removes an ipc endpoint's socket file, which ZeroMQ leaves behind when a
// process ends before its I/O thread has closed the socket; nothing for tcp.
void remove_ipc_file(const std::string& endpoint) {
  if (endpoint.rfind("ipc://", 0) != 0) return;
  std::error_code ignored;
  std::filesystem::remove(endpoint.substr(6), ignored);
}

// The sending process of one trial, killed if it outlives a failed one.
// A plain or raw sender exits only once told that everything arrived: a
// sender that closes its ipc socket while the receiver lags can lose what it
// queued last, linger or not (libzmq issue #4660). A reliable sender needs
// no word: its flush returns once the receiver acknowledged everything.
class Peer {
 public:
  Peer(const std::string& mode, const std::string& endpoint, size_t bytes, long count,
       const std::vector<std::string>& extra_args = {})
      : ack_endpoint_(ipc_endpoint("ack", 0)), needs_word_(mode != "reliable" && mode != "shared") {
    ack_ = zmq_socket(ack_context(), ZMQ_PUSH);
    int linger_ms = 0;  // the word is for a live peer; a dead one never takes it
    zmq_setsockopt(ack_, ZMQ_LINGER, &linger_ms, sizeof linger_ms);
    if (zmq_bind(ack_, ack_endpoint_.c_str()) != 0) throw std::runtime_error("cannot bind " + ack_endpoint_);
    std::vector<std::string> args = {peer_program(),        mode,         endpoint, std::to_string(bytes),
                                     std::to_string(count), ack_endpoint_};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
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
    remove_ipc_file(ack_endpoint_);
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  // Everything arrived: lets the peer exit (plain, raw), and checks that it
  // succeeded within kTimeout; kills it otherwise.
  void finish() {
    if (needs_word_) {
      int timeout_ms = static_cast<int>(kTimeout.count());
      zmq_setsockopt(ack_, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
      if (zmq_send(ack_, "", 0, 0) != 0) throw std::runtime_error("cannot acknowledge the peer");
    }
    int status = 0;
    const Clock::time_point deadline = Clock::now() + kTimeout;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) throw std::runtime_error("bench_zmq_ipc_peer did not exit");  // ~Peer kills it
      usleep(1000);
    }
    pid_ = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("bench_zmq_ipc_peer failed");
  }

 private:
  static void* ack_context() {
    static void* context = zmq_ctx_new();
    return context;
  }
  std::string ack_endpoint_;
  bool needs_word_;
  void* ack_ = nullptr;
  pid_t pid_ = -1;
};

// The receiving end of one kind of sender, bound once for every trial.
class Receiver {
 public:
  virtual ~Receiver() = default;
  // Seconds per message over `count` - 1 messages; the first one's data in *first.
  virtual double trial(long count, std::vector<float>* first = nullptr) = 0;
  // Reads a float of every page of each tensor received, as a consumer
  // would at the least: the memory is there, mapped, not merely named.
  void touch_pages() { touch_ = true; }

 protected:
  void touch(const void* data, size_t bytes) {
    if (!touch_) return;
    const auto* f = static_cast<const volatile float*>(data);
    float sum = 0;
    for (size_t i = 0; i < bytes / sizeof(float); i += 4096 / sizeof(float)) sum += f[i];
    sink_ = sum;
  }

 private:
  bool touch_ = false;
  volatile float sink_ = 0;
};

// The receiving end through sluice: a Channel with the sender's delivery.
class SluiceReceiver : public Receiver {
 public:
  // Over ipc, with default options but `delivery`.
  SluiceReceiver(size_t bytes, Delivery delivery)
      : SluiceReceiver(bytes, delivery == Delivery::Reliable ? "reliable" : "plain",
                       "@" + ipc_endpoint(delivery == Delivery::Reliable ? "reliable" : "plain", bytes),
                       {.delivery = delivery}) {}
  // Bound at `bind` with `options`, fed by peers of `mode` given `peer_args`
  // after the usual ones.
  SluiceReceiver(size_t bytes, const std::string& mode, const std::string& bind, ChannelOptions options,
                 std::vector<std::string> peer_args = {})
      : mode_(mode),
        bytes_(bytes),
        pull_(Pattern::Pull, bind, std::move(options)),
        endpoint_(pull_.bound_endpoint()),
        peer_args_(std::move(peer_args)) {}
  ~SluiceReceiver() override { remove_ipc_file(endpoint_); }
  SluiceReceiver(const SluiceReceiver&) = delete;
  SluiceReceiver& operator=(const SluiceReceiver&) = delete;

  double trial(long count, std::vector<float>* first = nullptr) override {
    Peer peer(mode_, endpoint_, bytes_, count, peer_args_);
    Tensor t = next();
    if (first) first->assign(t.data<float>().begin(), t.data<float>().end());
    auto start = Clock::now();
    for (long i = 1; i < count; ++i) next();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::optional<wire::Message> end = pull_.recv(kTimeout);
    if (!end || end->header.kind != wire::Kind::EndOfStream) throw std::runtime_error(mode_ + ": no end of stream");
    // Reliable: the end of stream is acknowledged now, not at a next recv
    // (which comes with the next trial), so that the sender's flush returns.
    pull_.keep_alive();
    peer.finish();
    return seconds / static_cast<double>(std::max(count - 1, 1L));
  }

 private:
  Tensor next() {
    std::optional<wire::Message> m = pull_.recv(kTimeout);
    if (!m || m->tensors.size() != 1 || m->tensors[0].spec().bytes() != static_cast<int64_t>(bytes_))
      throw std::runtime_error(mode_ + ": a message is missing or wrong");
    touch(m->tensors[0].host_data(), bytes_);
    return m->tensors[0];
  }

  std::string mode_;
  size_t bytes_;
  Channel pull_;
  std::string endpoint_;  // as the peers connect to it (tcp: the port bound)
  std::vector<std::string> peer_args_;
};

// The receiving end in raw libzmq: one PULL socket, one reused message.
class RawReceiver : public Receiver {
 public:
  // Fed by peers of `mode` (raw, raw-computed), bound at `bind` (empty: an
  // ipc path of its own).
  explicit RawReceiver(size_t bytes, std::string mode = "raw", std::string bind = "")
      : mode_(std::move(mode)), endpoint_(bind.empty() ? ipc_endpoint("raw", bytes) : bind), bytes_(bytes) {
    ctx_ = zmq_ctx_new();
    pull_ = zmq_socket(ctx_, ZMQ_PULL);
    int timeout_ms = static_cast<int>(kTimeout.count());
    zmq_setsockopt(pull_, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    if (zmq_bind(pull_, endpoint_.c_str()) != 0) throw std::runtime_error("raw: bind failed");
    char bound[256];
    size_t length = sizeof bound;
    if (zmq_getsockopt(pull_, ZMQ_LAST_ENDPOINT, bound, &length) == 0)
      endpoint_ = bound;  // tcp: the port taken
    zmq_msg_init(&msg_);
  }
  ~RawReceiver() override {
    zmq_msg_close(&msg_);
    zmq_close(pull_);
    zmq_ctx_term(ctx_);
    remove_ipc_file(endpoint_);
  }
  RawReceiver(const RawReceiver&) = delete;
  RawReceiver& operator=(const RawReceiver&) = delete;

  double trial(long count, std::vector<float>* first = nullptr) override {
    Peer peer(mode_, endpoint_, bytes_, count);
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
  void next() {
    int got = zmq_msg_recv(&msg_, pull_, 0);
    if (got < 0) throw std::runtime_error(std::string("raw: no message: ") + zmq_strerror(zmq_errno()));
    if (got != static_cast<int>(bytes_))
      throw std::runtime_error("raw: expected a message of " + std::to_string(bytes_) + " bytes, found " +
                               std::to_string(got));
    touch(zmq_msg_data(&msg_), bytes_);
  }

  std::string mode_, endpoint_;
  size_t bytes_;
  void* ctx_ = nullptr;
  void* pull_ = nullptr;
  zmq_msg_t msg_;
};

// Interleaved trials of `sluice` and `baseline`, after checking that both
// deliver the same data; the row `name` unless it is empty (a diagnostic:
// the ratio shows in the `speedup` counter alone).
void compare(benchmark::State& state, const std::string& name, Receiver& sluice, Receiver& baseline, long count,
             double goal) {
  std::vector<float> via_sluice, via_baseline;
  sluice.trial(2, &via_sluice);
  baseline.trial(2, &via_baseline);
  if (!check_close(state, via_sluice, via_baseline, 0)) return;
  Samples s = interleave(
      state, [&] { return sluice.trial(count); }, [&] { return baseline.trial(count); });
  if (!name.empty()) report_speedup(name, s, goal);
}

// Runs `body` (which sets up receivers and compares them); a failure marks
// the benchmark failed, with no row.
template <class Body>
void run_benchmark(benchmark::State& state, Body body) {
  try {
    body();
  } catch (const std::exception& e) { state.SkipWithError(e.what()); }
}

// A server's and a client's CurveZMQ certificates in a folder of their own,
// the client's public one in the server's allow folder; removed afterwards.
class CurveKeys {
 public:
  CurveKeys()
      : dir_(std::filesystem::temp_directory_path() / ("sluice-bench-" + std::to_string(getpid()) + "-curve")) {
    std::filesystem::create_directories(dir_ / "allow");
    curve::save(path("server"), curve::generate());
    curve::save(path("client"), curve::generate());
    std::filesystem::copy_file(dir_ / "client", dir_ / "allow" / "client",
                               std::filesystem::copy_options::overwrite_existing);
  }
  ~CurveKeys() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  CurveKeys(const CurveKeys&) = delete;
  CurveKeys& operator=(const CurveKeys&) = delete;
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

// Ping-pong with a peer that sends each message straight back: seconds per
// round trip. Both ends bound here, the peer connecting to both.
class SluiceHop : public Receiver {
 public:
  explicit SluiceHop(size_t bytes)
      : bytes_(bytes),
        ping_(Pattern::Push, "@" + ipc_endpoint("ping", bytes), {}),
        pong_(Pattern::Pull, "@" + ipc_endpoint("pong", bytes), {}),
        ramp_(ramp(bytes)) {}
  ~SluiceHop() override {
    remove_ipc_file(ping_.bound_endpoint());
    remove_ipc_file(pong_.bound_endpoint());
  }
  SluiceHop(const SluiceHop&) = delete;
  SluiceHop& operator=(const SluiceHop&) = delete;

  double trial(long count, std::vector<float>* first = nullptr) override {
    Peer peer("echo", ping_.bound_endpoint(), bytes_, count, {pong_.bound_endpoint()});
    Tensor back = round_trip();
    if (first) first->assign(back.data<float>().begin(), back.data<float>().end());
    auto start = Clock::now();
    for (long i = 1; i < count; ++i) round_trip();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ping_.send_end_of_stream(seq_++);
    std::optional<wire::Message> end = pong_.recv(kTimeout);
    if (!end || end->header.kind != wire::Kind::EndOfStream)
      throw std::runtime_error("echo: no end of stream");
    pong_.keep_alive();
    peer.finish();
    return seconds / static_cast<double>(std::max(count - 1, 1L));
  }

 private:
  static Tensor ramp(size_t bytes) {
    std::vector<float> v(bytes / sizeof(float));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000) * 0.5f;
    return tensor(v, Shape{static_cast<int64_t>(v.size())});
  }
  Tensor round_trip() {
    ping_.send({ramp_}, seq_++);
    std::optional<wire::Message> m = pong_.recv(kTimeout);
    if (!m || m->tensors.size() != 1 || m->tensors[0].spec().bytes() != static_cast<int64_t>(bytes_))
      throw std::runtime_error("echo: a message is missing or wrong");
    return m->tensors[0];
  }

  size_t bytes_;
  Channel ping_, pong_;
  Tensor ramp_;
  uint64_t seq_ = 0;
};

class RawHop : public Receiver {
 public:
  explicit RawHop(size_t bytes)
      : bytes_(bytes),
        ping_endpoint_(ipc_endpoint("raw-ping", bytes)),
        pong_endpoint_(ipc_endpoint("raw-pong", bytes)) {
    ctx_ = zmq_ctx_new();
    push_ = zmq_socket(ctx_, ZMQ_PUSH);
    pull_ = zmq_socket(ctx_, ZMQ_PULL);
    int timeout_ms = static_cast<int>(kTimeout.count());
    zmq_setsockopt(pull_, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    zmq_setsockopt(push_, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
    if (zmq_bind(push_, ping_endpoint_.c_str()) != 0 || zmq_bind(pull_, pong_endpoint_.c_str()) != 0)
      throw std::runtime_error("raw-echo: bind failed");
    data_.resize(bytes / sizeof(float));
    for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<float>(i % 1000) * 0.5f;
    zmq_msg_init(&msg_);
  }
  ~RawHop() override {
    zmq_msg_close(&msg_);
    zmq_close(push_);
    zmq_close(pull_);
    zmq_ctx_term(ctx_);
    remove_ipc_file(ping_endpoint_);
    remove_ipc_file(pong_endpoint_);
  }
  RawHop(const RawHop&) = delete;
  RawHop& operator=(const RawHop&) = delete;

  double trial(long count, std::vector<float>* first = nullptr) override {
    Peer peer("raw-echo", ping_endpoint_, bytes_, count, {pong_endpoint_});
    round_trip();
    if (first) {
      const auto* f = static_cast<const float*>(zmq_msg_data(&msg_));
      first->assign(f, f + bytes_ / sizeof(float));
    }
    auto start = Clock::now();
    for (long i = 1; i < count; ++i) round_trip();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    peer.finish();
    return seconds / static_cast<double>(std::max(count - 1, 1L));
  }

 private:
  void round_trip() {
    if (zmq_send(push_, data_.data(), bytes_, 0) != static_cast<int>(bytes_) ||
        zmq_msg_recv(&msg_, pull_, 0) != static_cast<int>(bytes_))
      throw std::runtime_error(std::string("raw-echo: a round trip failed: ") + zmq_strerror(zmq_errno()));
  }

  size_t bytes_;
  std::string ping_endpoint_, pong_endpoint_;
  std::vector<float> data_;
  void* ctx_ = nullptr;
  void* push_ = nullptr;
  void* pull_ = nullptr;
  zmq_msg_t msg_;
};

constexpr size_t k1MiB = size_t{1} << 20;
constexpr long kCount1MiB = 1000;
constexpr long kCount64B = 200000;

void BM_zmq_ipc_1MiB(benchmark::State& state) {
  run_benchmark(state, [&] {
    SluiceReceiver reliable(k1MiB, Delivery::Reliable);
    RawReceiver raw(k1MiB);
    compare(state, "zmq_ipc_1MiB", reliable, raw, kCount1MiB, 2);
  });
}
BENCHMARK(BM_zmq_ipc_1MiB)->Iterations(15)->UseManualTime()->Unit(benchmark::kMicrosecond);

// What a user gets by default for a small tensor (reliable, packed in one
// frame) against raw libzmq's one frame. The row measures the default on
// purpose, even where plain mode would score higher: zmq_ipc_64B_plain
// below shows the plain Channel's figure beside it.
void BM_zmq_ipc_64B(benchmark::State& state) {
  run_benchmark(state, [&] {
    SluiceReceiver reliable(64, Delivery::Reliable);
    RawReceiver raw(64);
    compare(state, "zmq_ipc_64B", reliable, raw, kCount64B, 2);
  });
}
BENCHMARK(BM_zmq_ipc_64B)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Not a row: the plain Channel against raw libzmq, both one frame: what
// the Channel and the wire format cost without the reliable protocol.
void BM_zmq_ipc_64B_plain(benchmark::State& state) {
  run_benchmark(state, [&] {
    SluiceReceiver plain(64, Delivery::Plain);
    RawReceiver raw(64);
    compare(state, "", plain, raw, kCount64B, 0);
  });
}
BENCHMARK(BM_zmq_ipc_64B_plain)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Frames, both: what the reliable protocol costs, not what shared memory saves.
ChannelOptions in_frames() {
  ChannelOptions o;
  o.shared_memory = false;
  return o;
}

void BM_reliable_ipc_1MiB(benchmark::State& state) {
  run_benchmark(state, [&] {
    SluiceReceiver reliable(k1MiB, "reliable", "@" + ipc_endpoint("reliable", k1MiB), in_frames());
    SluiceReceiver plain(k1MiB, Delivery::Plain);
    compare(state, "reliable_ipc_1MiB", reliable, plain, kCount1MiB, 1.0);
  });
}
BENCHMARK(BM_reliable_ipc_1MiB)->Iterations(15)->UseManualTime()->Unit(benchmark::kMicrosecond);

// A small message travels packed, so shared memory changes nothing but the
// transport: the default reliable channel, over a same-host ring.
void BM_reliable_ipc_64B(benchmark::State& state) {
  run_benchmark(state, [&] {
    SluiceReceiver reliable(64, Delivery::Reliable);
    SluiceReceiver plain(64, Delivery::Plain);
    compare(state, "reliable_ipc_64B", reliable, plain, kCount64B, 0.9);
  });
}
BENCHMARK(BM_reliable_ipc_64B)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

// A same-host channel: the sender's tensor in shared memory, the receiver
// reading it in place, against raw libzmq moving the same bytes.
void shared_against_raw(benchmark::State& state, const std::string& name, size_t bytes, long count, double goal) {
  run_benchmark(state, [&] {
    SluiceReceiver shared(bytes, "shared", "@" + ipc_endpoint("shared", bytes), {});
    RawReceiver raw(bytes, "raw-computed");
    shared.touch_pages();
    raw.touch_pages();
    compare(state, name, shared, raw, count, goal);
  });
}

void BM_shm_ipc_16MiB(benchmark::State& state) { shared_against_raw(state, "shm_ipc_16MiB", size_t{16} << 20, 100, 4); }
BENCHMARK(BM_shm_ipc_16MiB)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_shm_ipc_64KiB(benchmark::State& state) { shared_against_raw(state, "shm_ipc_64KiB", size_t{64} << 10, 20000, 2); }
BENCHMARK(BM_shm_ipc_64KiB)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Between hosts (tcp loopback): the default channel against raw libzmq,
// one message a frame. Small messages sent close together travel
// coalesced (WIRE_FORMAT.md, "Batches"); raw ZeroMQ batches only inside
// its I/O thread. Two hosts share no memory, so neither does the receiver
// here: over loopback it would, and the messages would take a ring.
void BM_tcp_64B(benchmark::State& state) {
  run_benchmark(state, [&] {
    SluiceReceiver reliable(64, "reliable", "@tcp://127.0.0.1:*", in_frames());
    RawReceiver raw(64, "raw", "tcp://127.0.0.1:*");
    compare(state, "tcp_64B", reliable, raw, kCount64B, 1.5);
  });
}
BENCHMARK(BM_tcp_64B)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Both ends default channels (reliable, in frames) over tcp loopback, one
// pair with CurveZMQ (the sender's key allowed by the receiver), one without.
void BM_curve_tcp_1MiB(benchmark::State& state) {
  run_benchmark(state, [&] {
    CurveKeys keys;
    ChannelOptions secure = in_frames();
    secure.curve = {.secret = keys.path("server_secret"), .server = "", .allow = keys.path("allow")};
    SluiceReceiver curve(k1MiB, "reliable", "@tcp://127.0.0.1:*", secure,
                         {keys.path("client_secret"), keys.path("server")});
    SluiceReceiver plaintext(k1MiB, "reliable", "@tcp://127.0.0.1:*", in_frames());
    compare(state, "curve_tcp_1MiB", curve, plaintext, kCount1MiB, 0.3);
  });
}
BENCHMARK(BM_curve_tcp_1MiB)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_hop_latency_64B(benchmark::State& state) {
  run_benchmark(state, [&] {
    SluiceHop sluice(64);
    RawHop raw(64);
    compare(state, "hop_latency_64B", sluice, raw, 20000, 3);
  });
}
BENCHMARK(BM_hop_latency_64B)->Iterations(9)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sluice::bench
