// The sending process of bench_zmq_ipc, which starts it once per trial:
//   bench_zmq_ipc_peer sluice|raw|raw-wire ENDPOINT BYTES COUNT ACK_ENDPOINT
// connects a PUSH socket to ENDPOINT and sends COUNT messages of one f32
// tensor of BYTES bytes (ramp values), then an end marker, then waits for the
// receiver's word on ACK_ENDPOINT that all arrived before it closes:
//   sluice    through a Channel (the wire format; end of stream at the end);
//   raw       the tensor's bytes as one libzmq frame (lent without a copy from
//             1 KiB up, as the Channel lends them; an empty frame at the end);
//   raw-wire  the frames a Channel sends for it, as plain libzmq frames.

#include <zmq.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "io/channel.h"

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

// The frames a Channel sends for one message holding `t`.
std::vector<std::string> wire_frames(const sluice::Tensor& t) {
  sluice::wire::Message m;
  m.header.kind = sluice::wire::Kind::Data;
  m.tensors = {t};
  std::vector<std::string> frames;
  for (const sluice::wire::Frame& f : sluice::wire::encode(m))
    frames.emplace_back(static_cast<const char*>(f.data), f.size);
  return frames;
}

int send_sluice(const std::string& endpoint, const sluice::Tensor& t, long count, Acknowledgement& ack) {
  using namespace sluice;
  Channel push(Pattern::Push, ">" + endpoint, {.linger = std::chrono::milliseconds(-1)});
  for (long i = 0; i < count; ++i) push.send({t}, static_cast<uint64_t>(i));
  push.send_end_of_stream(static_cast<uint64_t>(count));
  return ack.wait() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: bench_zmq_ipc_peer sluice|raw|raw-wire ENDPOINT BYTES COUNT ACK_ENDPOINT\n");
    return 2;
  }
  const std::string mode = argv[1], endpoint = argv[2];
  std::vector<float> data(std::strtoul(argv[3], nullptr, 10) / sizeof(float));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 1000) * 0.5f;
  const long count = std::strtol(argv[4], nullptr, 10);
  try {
    Acknowledgement ack(argv[5]);
    const sluice::Tensor t = sluice::tensor(data, sluice::Shape{static_cast<int64_t>(data.size())});
    if (mode == "sluice") return send_sluice(endpoint, t, count, ack);
    if (mode == "raw-wire") return send_raw(endpoint, wire_frames(t), count, ack);
    return send_raw(endpoint,
                    {std::string(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float))},
                    count, ack);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_zmq_ipc_peer: %s\n", e.what());
    return 1;
  }
}
