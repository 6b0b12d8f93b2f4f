#pragma once
// Pipeline nodes on ZeroMQ channels: a source receiving wire-format messages
// from other processes, and a sink sending them.
//
//   // process A                                   // process B
//   p.sink("out", sluice::sinks::zmq(">ipc:///tmp/s"));   p.source("in",
//                                                        sluice::sources::zmq("@ipc:///tmp/s", {sluice::f32({256})}));
//
// The sink sends each message, then an end of stream when the pipeline
// finishes; the source ends once every expected peer has sent its end of
// stream. Over a reliable channel (the default) nothing is lost: the
// source acknowledges a message only when its pipeline has finished with
// it, and the sink's finish() returns only once everything, end of stream
// included, was acknowledged.

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
  ChannelOptions channel{};
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
// and skipped: the source goes on. Reliable: each message is acknowledged
// once every sink has consumed it (or it was skipped under
// ErrorPolicy::Skip); what a cancelled run dropped is not, so its sender
// keeps it for the next receiver.
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
  // Hands `m` to the pipeline, keeping the channel alive while it waits
  // for room; false when the source should stop.
  bool hand_on(const wire::Message& m);
  void reject(const std::string& why);

  ZmqSourceOptions options_;
  Channel channel_;  // used by the receiving thread only
  std::string bound_endpoint_;
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> rejected_{0}, peer_errors_{0}, ends_{0};
  // Messages handed on whose done callback has not run yet.
  std::shared_ptr<std::atomic<int64_t>> in_pipeline_ = std::make_shared<std::atomic<int64_t>>(0);
  mutable std::mutex mutex_;  // guards last_rejection_
  std::string last_rejection_;
  std::thread thread_;
};

struct ZmqSinkOptions {
  Pattern pattern = Pattern::Push;  // push, pub or pair
  ChannelOptions channel{};
  uint64_t stream_id = 0;  // the header's stream id: a sub socket's topic
  // Reliable: how long finish() waits for the receiver to acknowledge
  // everything, end of stream included.
  std::chrono::milliseconds finish_timeout{60000};
};

// Sends each message, and an end of stream from finish(). Plain: each
// message keeps its pipeline sequence number; reliable: the channel numbers
// them 0, 1, 2... itself. While there is no room (the peer's credit or
// queue is full) consume waits: backpressure reaches the pipeline; a
// cancelled pipeline lets it go. finish() sends the end of stream and,
// reliable, waits until all was acknowledged: PipelineError naming how many
// messages were not delivered otherwise. Thread safety: consume and finish
// from one thread at a time (the pipeline's).
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
