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
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sluice/io/channel.h>
#include <sluice/pipeline/sinks.h>
#include <sluice/pipeline/sources.h>

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
// pipeline. Checkpoints (README, "Checkpoints"): a barrier from the sender
// becomes this pipeline's barrier (when it has no interval of its own);
// while the pipeline stores checkpoints, what it received is acknowledged to
// the sender only once the oldest checkpoint the store keeps is after it,
// so that the sender replays it to a process restored from any checkpoint
// kept (a restore passes over damaged newer ones), and restoring resumes
// each stream at the sequence number after the checkpoint's. A stream is
// then taken whole: from seq 0, or from the checkpoint's position; a sender
// that no longer keeps what comes there (committed by checkpoints this
// process no longer has) fails the run, naming the messages lost. An
// update message (`sluice update`) asks the pipeline to replace a stage's
// accumulator at its next barrier; a refusal goes back to its sender. A malformed message, a message of other
// specs, or an error message from a peer is counted, logged with the endpoint and the reason, and skipped:
// the source goes on. Reliable: each message is acknowledged once every sink has consumed it (or it was
// skipped under ErrorPolicy::Skip); what a cancelled run dropped is not, so its sender keeps it for the next
// receiver.
//
// It receives on a thread of its own, started at construction (it binds or
// connects then) and taking messages once its pipeline starts (after a
// restore has said where each stream resumes), and pushes into the pipeline as a PushSource: waiting on
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
  // Its channel's counters as the receiving thread last read them (only
  // that thread may read a receiving channel), at most 50 ms old while it
  // receives. Any thread.
  ChannelCounters channel_counters() const;
  // Reliable: channel_peers_lost, channel_duplicates, channel_rejected,
  // channel_refused (peers refused at a CurveZMQ handshake), and
  // channel_in_pipeline (received, not yet finished with: unacknowledged).
  std::map<std::string, double> figures() const override;

  bool replayable() const override { return options_.channel.delivery == Delivery::Reliable; }
  void resume(uint64_t position, const std::string& state) override;
  void checkpointing(bool stored) override;  // the pipeline starts: receiving begins
  std::string checkpoint_state(int64_t number) override;
  void forget_before(int64_t number) override;

 private:
  void receive();  // the receiving thread
  // Hands `m` to the pipeline, keeping the channel alive while it waits
  // for room; false when the source should stop.
  bool hand_on(const wire::Message& m);
  void reject(const std::string& why);
  // A message not handed on (end of stream, error, rejected): done with.
  void let_go(const wire::Message& m);
  // Takes one message received (or held and now released); false when the source should stop.
  bool take(const wire::Message& m);
  // Once every sender's barrier came (or its stream ended): forwards the
  // checkpoint and releases the messages held meanwhile.
  void align();
  // Barrier messages of one checkpoint, one per sender: this pipeline's barrier.
  void forward_barrier(const std::vector<wire::Message>& barriers);
  // With mutex_ held: `m` is this source's position in its stream.
  void advance(const wire::Message& m);
  std::string positions() const;  // with mutex_ held: "stream:next ..."
  bool all_acknowledged() const;
  // The receiving thread: copies the channel's counters for
  // channel_counters(), every 50 ms at most unless `now`.
  void mirror_counters(bool now = false);

  ZmqSourceOptions options_;
  Channel channel_;  // used by the receiving thread only
  std::string bound_endpoint_;
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> rejected_{0}, peer_errors_{0}, ends_{0};
  // Messages handed on whose done callback has not run yet.
  std::shared_ptr<std::atomic<int64_t>> in_pipeline_ = std::make_shared<std::atomic<int64_t>>(0);
  std::atomic<bool> stored_{false};  // whether the pipeline stores checkpoints
  bool warned_barriers_ = false;
  // The receiving thread's: barriers of the checkpoint being aligned, by
  // stream; what came after them, held; released, to take before reading
  // again; streams ended; the last checkpoint number forwarded.
  std::map<uint64_t, wire::Message> arrived_;
  std::deque<wire::Message> held_, ready_;
  std::set<uint64_t> ended_;
  int64_t forwarded_ = 0;
  mutable std::mutex mutex_;  // guards what follows
  std::string last_rejection_;
  std::map<uint64_t, uint64_t> next_;       // stream id -> the seq after the last handed on
  std::map<uint64_t, uint64_t> handed_;     // sender -> the last seq taken from it (handed on or let go)
  std::map<uint64_t, uint64_t> committed_;  // sender -> every seq below is acknowledged to it
  bool resumed_ = false;                    // next_ holds a checkpoint's positions, to set before receiving
  bool started_ = false;                    // the pipeline started: receiving may begin
  std::condition_variable start_;
  // Per checkpoint: how far each sender's messages reach before its
  // barrier, acknowledged to the senders once that checkpoint is stored.
  std::map<int64_t, std::map<uint64_t, uint64_t>> barriers_;
  ChannelCounters counters_;
  std::chrono::steady_clock::time_point mirrored_{};  // the receiving thread's
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
// them 0, 1, 2... itself. At a checkpoint barrier it sends the barrier on;
// when its pipeline stores checkpoints, its part of the checkpoint is done
// once the receiver has acknowledged everything up to the barrier, so that
// its output is safe with the checkpoint: it goes on sending meanwhile (a
// watcher thread hands its part in), rather than stall its pipeline for a
// round trip to the receiver's own checkpoint. Restored, it numbers on from the checkpoint's, and a receiver
// with ChannelOptions::continue_streams drops what it had. While there is no room (the peer's credit or
// queue is full) consume waits, on a thread of the sink's own rather than
// the pipeline's (Sink::waits_for_reader): backpressure reaches the
// pipeline; a stopped pipeline lets it go. end_stream() sends the end of stream and
// finish() (sending it first if need be), reliable, waits until all was acknowledged: PipelineError naming
// how many messages were not delivered otherwise. Thread safety: consume and finish from one thread at a time
// (the pipeline's).
class ZmqSink : public Sink {
 public:
  ZmqSink(const std::string& endpoint, ZmqSinkOptions options);
  void consume(uint64_t seq, const Tensors& tensors) override;
  void consume_tagged(uint64_t seq, const Tensors& tensors,
                      const Tags& tags) override;  // tags after the tensors
  // A reader may have no room: the pipeline sends what would wait from a
  // thread of the sink's own (Sink::waits_for_reader).
  bool waits_for_reader() const override { return true; }
  bool try_consume(uint64_t seq, const Tensors& tensors, const Tags& tags) override;
  void stop() override { stopping_ = true; }
  void end_stream() override;
  void finish() override;
  void checkpointing(bool stored) override { stored_ = stored; }
  std::string prepare(int64_t number) override;
  void prepare_then(int64_t number, const Prepared& done) override;
  void resume(int64_t number, const std::string& state) override;
  ~ZmqSink() override;
  std::string bound_endpoint() const { return channel_.bound_endpoint(); }
  // Its channel's counters; any thread while the pipeline runs (a restore
  // replaces the channel before).
  ChannelCounters channel_counters() const { return channel_.counters(); }
  // Shared on an ipc endpoint of a reliable channel that shares memory: its
  // tensors then go to the receiver by reference.
  OutputMemory input_memory() const override;
  // Reliable: channel_credit (messages it may still send before it waits),
  // channel_unacknowledged, channel_resent, channel_peers_lost.
  std::map<std::string, double> figures() const override;

 private:
  // Sends `m`, waiting for room in short steps so that a stopped
  // pipeline is not held by a peer that stopped reading.
  bool send_or_cancelled(const wire::Message& m);
  wire::Message data(uint64_t seq, const Tensors& tensors, const Tags& tags) const;
  std::atomic<bool> stopping_{false};  // stop(): the run stops early

  std::string endpoint_;
  ZmqSinkOptions options_;
  Channel channel_;
  // Sends barrier `number`; WireError... as prepare, before it waits.
  void send_barrier(int64_t number);
  // Every seq below this one is acknowledged by the receiver (any thread).
  uint64_t acknowledged_below() const;
  // The watcher: hands in each barrier's part once it is acknowledged, or
  // fails it past finish_timeout. `stop`: the run is over, the rest are dropped.
  void watch_barriers();
  void stop_watching();
  // Hands in, oldest first, the parts of the awaited barriers the receiver
  // has acknowledged.
  void hand_in_acknowledged();

  uint64_t next_seq_ = 0;
  std::atomic<uint64_t> sent_{0};  // reliable: the number the channel gives the next message
  bool stored_ = false;
  bool finished_ = false;
  bool ended_ = false;              // end_stream() ran
  std::exception_ptr end_failure_;  // why its end of stream was not sent
  // Barriers sent and not yet acknowledged, oldest first.
  struct Awaited {
    int64_t number = 0;
    uint64_t seq = 0;  // the barrier's, as the channel numbered it
    std::string state;
    Prepared done;
    std::chrono::steady_clock::time_point deadline;
  };
  std::mutex handing_mutex_;  // held while parts are handed in: in barrier order, from either thread
  std::mutex awaited_mutex_;
  std::condition_variable awaited_cv_;
  std::deque<Awaited> awaited_;
  bool watcher_stopping_ = false;
  std::thread watcher_;
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
