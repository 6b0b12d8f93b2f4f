// The sending process of bench_zmq_ipc, which starts it once per trial:
//   bench_zmq_ipc_peer reliable|shared|plain|raw|raw-computed ENDPOINT BYTES COUNT ACK_ENDPOINT [SECRET
//   SERVER] bench_zmq_ipc_peer echo|raw-echo ENDPOINT BYTES COUNT ACK_ENDPOINT BACK
// connects to ENDPOINT and sends COUNT messages of one f32 tensor of BYTES
// bytes (ramp values), then an end marker:
//   reliable  through a Channel with default options, as a user gets it
//             (reliable; a small tensor packed in one frame); end of stream
//             at the end, then flush: exits once the receiver acknowledged
//             everything, with no word on ACK_ENDPOINT;
//   shared    as reliable, each message a new tensor (the ramp plus its
//             number) computed whole into a freshly allocated slot of shared
//             memory (OutputMemory::Shared), as a pipeline stage's outputs
//             for a same-host edge are: a receiver on this host reads it in
//             place, and the slot comes back when it lets go;
//   plain     through a Channel with Delivery::Plain (raw ZeroMQ PUSH, the
//             same packing); end of stream at the end;
//   raw       the tensor's bytes as one libzmq frame (lent without a copy from
//             1 KiB up, as the Channel lends them; an empty frame at the end);
//   raw-computed  as raw, each message computed as shared's are, into the
//             process's own memory (the baseline of shared).
//   echo      takes COUNT messages from ENDPOINT through a default Channel
//             and sends each back at once to BACK through another, then
//             the end of stream likewise (a ping-pong's far side);
//   raw-echo  the same in raw libzmq PULL and PUSH, one frame each.
// With SECRET and SERVER (certificate files), a reliable sender speaks
// CurveZMQ to the receiver whose public certificate is SERVER.
// plain and raw wait for the receiver's word on ACK_ENDPOINT that all
// arrived before they close: a PUSH socket closed while the receiver lags
// can lose what it queued last, linger or not (libzmq issue #4660).

#include <zmq.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <optional>

#include <sluice/io/channel.h>
#include <sluice/ops/ops.h>

namespace {

// The receiver's word that everything arrived, connected before sending.
class Acknowledgement {
 public:
  explicit Acknowledgement(const std::string& endpoint)
      : context_(zmq_ctx_new()), pull_(zmq_socket(context_, ZMQ_PULL)) {
    int timeout_ms = 60000;
    zmq_setsockopt(pull_, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    zmq_connect(pull_, endpoint.c_str());
  }
  ~Acknowledgement() {
    zmq_close(pull_);
    zmq_ctx_term(context_);
  }
  Acknowledgement(const Acknowledgement&) = delete;
  Acknowledgement& operator=(const Acknowledgement&) = delete;
  bool wait() { return zmq_recv(pull_, nullptr, 0, 0) == 0; }

 private:
  void* context_;
  void* pull_;
};

// Message i of the computed modes: the ramp plus i, written whole by the
// kernel into `memory` (a fresh allocation each time).
class Computed {
 public:
  explicit Computed(const sluice::Tensor& ramp)
      : ramp_(ramp),
        plus_(sluice::compile(sluice::trace({ramp.spec(), sluice::f32({})},
                                            [](sluice::Expr x, sluice::Expr k) { return x + k; }),
                              sluice::host())) {}
  sluice::Tensor operator()(long i, sluice::OutputMemory memory) const {
    return plus_.run({ramp_, sluice::scalar(static_cast<float>(i))}, {.output_memory = memory})[0];
  }

 private:
  sluice::Tensor ramp_;
  sluice::Executable plus_;
};

// Sends message i computed into this process's memory, lent to ZeroMQ
// until sent, `count` times, then an empty end marker.
int send_raw_computed(const std::string& endpoint, const Computed& computed, long count, Acknowledgement& ack) {
  void* ctx = zmq_ctx_new();
  void* push = zmq_socket(ctx, ZMQ_PUSH);
  if (zmq_connect(push, endpoint.c_str()) != 0) return 1;
  for (long i = 0; i < count; ++i) {
    auto* t = new sluice::Tensor(computed(i, sluice::OutputMemory::Default));
    zmq_msg_t msg;
    zmq_msg_init_data(
        &msg, const_cast<void*>(t->host_data()), static_cast<size_t>(t->spec().bytes()),
        [](void*, void* hint) { delete static_cast<sluice::Tensor*>(hint); }, t);
    if (zmq_msg_send(&msg, push, 0) < 0) return 1;
  }
  zmq_send(push, nullptr, 0, 0);
  const bool acknowledged = ack.wait();
  zmq_close(push);
  zmq_ctx_term(ctx);
  return acknowledged ? 0 : 1;
}

// Sends `frames` as one message `count` times, then an empty end marker.
int send_raw(const std::string& endpoint, const std::vector<std::string>& frames, long count,
             Acknowledgement& ack) {
  void* ctx = zmq_ctx_new();
  void* push = zmq_socket(ctx, ZMQ_PUSH);
  if (zmq_connect(push, endpoint.c_str()) != 0) return 1;
  for (long i = 0; i < count; ++i) {
    for (size_t f = 0; f < frames.size(); ++f) {
      const std::string& bytes = frames[f];
      zmq_msg_t msg;
      if (bytes.size() >= 1024) {
        zmq_msg_init_data(&msg, const_cast<char*>(bytes.data()), bytes.size(), nullptr, nullptr);
      } else {
        zmq_msg_init_size(&msg, bytes.size());
        std::memcpy(zmq_msg_data(&msg), bytes.data(), bytes.size());
      }
      if (zmq_msg_send(&msg, push, f + 1 < frames.size() ? ZMQ_SNDMORE : 0) < 0) return 1;
    }
  }
  zmq_send(push, nullptr, 0, 0);
  const bool acknowledged = ack.wait();
  zmq_close(push);
  zmq_ctx_term(ctx);
  return acknowledged ? 0 : 1;
}

// Bounds a trial whose receiver went away: the parent kills a peer it no
// longer waits for, but a peer never waits longer than this by itself.
constexpr std::chrono::milliseconds kTimeout{10000};

// Through a default Channel: the same tensor `t` each time, or with
// `computed`, message i computed into fresh shared memory.
int send_reliable(const std::string& endpoint, const sluice::Tensor& t, long count, sluice::CurveOptions curve,
                  const Computed* computed = nullptr) {
  using namespace sluice;
  ChannelOptions options;  // the defaults, but a bounded wait for a receiver
  options.peer_timeout = kTimeout;
  options.curve = std::move(curve);
  Channel push(Pattern::Push, ">" + endpoint, options);
  for (long i = 0; i < count; ++i)
    push.send({computed ? (*computed)(i, OutputMemory::Shared) : t}, static_cast<uint64_t>(i));
  push.send_end_of_stream(static_cast<uint64_t>(count));
  push.flush(kTimeout);  // everything acknowledged: closing loses nothing
  return 0;
}

int send_plain(const std::string& endpoint, const sluice::Tensor& t, long count, Acknowledgement& ack) {
  using namespace sluice;
  Channel push(Pattern::Push, ">" + endpoint,
               {.delivery = Delivery::Plain, .linger = std::chrono::milliseconds(-1)});
  for (long i = 0; i < count; ++i) push.send({t}, static_cast<uint64_t>(i));
  push.send_end_of_stream(static_cast<uint64_t>(count));
  return ack.wait() ? 0 : 1;
}

int echo(const std::string& endpoint, const std::string& back, long count, Acknowledgement& ack) {
  using namespace sluice;
  ChannelOptions options;  // the defaults, but a bounded wait for the other side
  options.peer_timeout = kTimeout;
  Channel in(Pattern::Pull, ">" + endpoint, options);
  Channel out(Pattern::Push, ">" + back, options);
  for (long i = 0; i <= count; ++i) {
    std::optional<wire::Message> m = in.recv(kTimeout);
    if (!m) return 1;
    if (m->header.kind == wire::Kind::EndOfStream) {
      out.send_end_of_stream(static_cast<uint64_t>(i));
      break;
    }
    out.send(m->tensors, static_cast<uint64_t>(i));
  }
  out.flush(kTimeout);
  return ack.wait() ? 0 : 1;
}

int raw_echo(const std::string& endpoint, const std::string& back, long count, Acknowledgement& ack) {
  void* ctx = zmq_ctx_new();
  void* pull = zmq_socket(ctx, ZMQ_PULL);
  void* push = zmq_socket(ctx, ZMQ_PUSH);
  if (zmq_connect(pull, endpoint.c_str()) != 0 || zmq_connect(push, back.c_str()) != 0) return 1;
  zmq_msg_t msg;
  zmq_msg_init(&msg);
  for (long i = 0; i < count; ++i)
    if (zmq_msg_recv(&msg, pull, 0) < 0 || zmq_msg_send(&msg, push, 0) < 0) return 1;
  zmq_msg_close(&msg);
  const bool acknowledged = ack.wait();
  zmq_close(pull);
  zmq_close(push);
  zmq_ctx_term(ctx);
  return acknowledged ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool echoes =
      argc > 1 && (std::strcmp(argv[1], "echo") == 0 || std::strcmp(argv[1], "raw-echo") == 0);
  if (echoes ? argc != 7 : argc != 6 && argc != 8) {
    std::fprintf(
        stderr,
        "usage: bench_zmq_ipc_peer reliable|shared|plain|raw|raw-computed ENDPOINT BYTES COUNT ACK_ENDPOINT "
        "[SECRET SERVER]\n       bench_zmq_ipc_peer echo|raw-echo ENDPOINT BYTES COUNT ACK_ENDPOINT BACK\n");
    return 2;
  }
  const std::string mode = argv[1], endpoint = argv[2];
  std::vector<float> data(std::strtoul(argv[3], nullptr, 10) / sizeof(float));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 1000) * 0.5f;
  const long count = std::strtol(argv[4], nullptr, 10);
  try {
    const sluice::Tensor t = sluice::tensor(data, sluice::Shape{static_cast<int64_t>(data.size())});
    sluice::CurveOptions curve;
    if (argc == 8) curve = {.secret = argv[6], .server = argv[7], .allow = ""};
    if (mode == "reliable") return send_reliable(endpoint, t, count, curve);
    if (mode == "shared") {
      const Computed computed(t);
      return send_reliable(endpoint, t, count, curve, &computed);
    }
    Acknowledgement ack(argv[5]);
    if (mode == "echo") return echo(endpoint, argv[6], count, ack);
    if (mode == "raw-echo") return raw_echo(endpoint, argv[6], count, ack);
    if (mode == "plain") return send_plain(endpoint, t, count, ack);
    if (mode == "raw-computed") return send_raw_computed(endpoint, Computed(t), count, ack);
    if (mode != "raw") {
      std::fprintf(stderr, "bench_zmq_ipc_peer: mode: expected reliable, shared, plain, raw or raw-computed, found %s\n",
                   mode.c_str());
      return 2;
    }
    return send_raw(endpoint,
                    {std::string(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float))},
                    count, ack);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_zmq_ipc_peer: %s\n", e.what());
    return 1;
  }
}
