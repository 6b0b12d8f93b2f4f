#pragma once
// Pipeline nodes on ZeroMQ channels: a source receiving wire-format messages
// from other processes, and a sink sending them.
//
//   // process A                                   // process B
//   p.sink("out", sluice::sinks::zmq(">ipc:///tmp/s"));   p.source("in",
//                                                        sluice::sources::zmq("@ipc:///tmp/s", {sluice::f32({256})}));
//
// The sink sends each message with its sequence number, then an end of
// stream when the pipeline finishes; the source ends once every expected
// peer has sent its end of stream.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/channel.h"
#include "pipeline/sinks.h"
#include "pipeline/sources.h"

namespace sluice {

struct ZmqSourceOptions {
  Pattern pattern = Pattern::Pull;  // pull, sub or pair
  ChannelOptions channel;
  // End after this many end-of-stream messages (one per sending peer); 0:
  // receive until stopped or cancelled.
  int expected_peers = 1;
  // How often the receiving thread, while nothing arrives, looks whether it
  // should stop.
  std::chrono::milliseconds poll_interval{20};
};

// Receives messages whose tensors must match `spec` and feeds them to the
// pipeline. A malformed message, a message of other specs, or an error
// message from a peer is counted, logged with the endpoint and the reason,
// and skipped: the source goes on.
//
// It receives on a thread of its own, started at construction (it binds or
// connects then), and pushes into the pipeline as a PushSource: waiting on
// the network never holds one of oneTBB's workers, which the stages of this
// and other pipelines need. A ZmqSource feeds one pipeline run.
// Thread safety: stop() and the counters may be called from any thread.
class ZmqSource : public PushSource {
 public:
  ZmqSource(const std::string& endpoint, std::vector<Spec> spec, ZmqSourceOptions options);
  ~ZmqSource() override;  // stops receiving
  ZmqSource(const ZmqSource&) = delete;
  ZmqSource& operator=(const ZmqSource&) = delete;

  // Ends the source now, as if every expected peer had ended.
  void stop();

  // Malformed messages and messages of other specs skipped so far.
  uint64_t rejected() const { return rejected_.load(); }
  // Error messages received from peers.
  uint64_t peer_errors() const { return peer_errors_.load(); }
  uint64_t ends_received() const { return ends_.load(); }
  std::string last_rejection() const;
  // The address bound (tcp://127.0.0.1:54321 when bound to port *).
  std::string bound_endpoint() const { return bound_endpoint_; }

 private:
  void receive();  // the receiving thread
  void reject(const std::string& why);

  ZmqSourceOptions options_;
  Channel channel_;  // used by the receiving thread only
  std::string bound_endpoint_;
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> rejected_{0}, peer_errors_{0}, ends_{0};
  mutable std::mutex mutex_;  // guards last_rejection_
  std::string last_rejection_;
  std::thread thread_;
};

struct ZmqSinkOptions {
  Pattern pattern = Pattern::Push;  // push, pub or pair
  ChannelOptions channel;
  uint64_t stream_id = 0;  // the header's stream id: a sub socket's topic
};

// Sends each message with its sequence number, and an end of stream (with
// the next sequence number) from finish(). While the peers' queues are full
// (push, pair) consume waits: backpressure reaches the pipeline; a cancelled
// pipeline lets it go. Thread safety: consume and finish from one thread at
// a time (the pipeline's).
class ZmqSink : public Sink {
 public:
  ZmqSink(const std::string& endpoint, ZmqSinkOptions options);
  void consume(uint64_t seq, const Tensors& tensors) override;
  void finish() override;
  std::string bound_endpoint() const { return channel_.bound_endpoint(); }

 private:
  ZmqSinkOptions options_;
  Channel channel_;
  uint64_t next_seq_ = 0;
  bool finished_ = false;
};

namespace sources {
// A source receiving from `endpoint` (without '@' or '>' it binds).
std::shared_ptr<ZmqSource> zmq(const std::string& endpoint, std::vector<Spec> spec, ZmqSourceOptions options = {});
}  // namespace sources

namespace sinks {
// A sink sending to `endpoint` (without '@' or '>' it connects).
std::shared_ptr<ZmqSink> zmq(const std::string& endpoint, ZmqSinkOptions options = {});
}  // namespace sinks

}  // namespace sluice
