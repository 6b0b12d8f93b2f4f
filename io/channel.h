#pragma once
// Channel: a ZeroMQ socket that sends or receives wire-format messages.
//
// An endpoint is a ZeroMQ address (tcp://host:port, ipc:///path,
// inproc://name); a leading '@' binds and a leading '>' connects (CZMQ's
// convention); without one, a receiving socket (pull, sub, pair) binds and a
// sending one (push, pub) connects.
//
// Delivery::Reliable (the default for push and pull) loses nothing: the
// receiver grants credit, acknowledges what it has finished with, and both
// sides beat a heartbeat; the sender keeps every unacknowledged message and
// sends it again to a receiver that comes back, and the receiver drops what
// it has already taken (io/WIRE_FORMAT.md, "Reliable mode").
//
//   Channel out(Pattern::Push, "ipc:///tmp/s");          Channel in(Pattern::Pull, "ipc:///tmp/s");
//   out.send({t}, 0);                                     while (auto m = in.recv()) {
//   out.send_end_of_stream(1);                              ...                // acknowledged at the next recv
//   out.flush(std::chrono::seconds(60));   // all taken     if (m->header.kind == wire::Kind::EndOfStream) break;
//                                                         }
//
// Delivery::Plain is raw ZeroMQ (PUSH/PULL, PUB/SUB, PAIR), for peers that
// speak only the version 1 frames: what a peer does not take is lost when
// the sender's linger time ends, and a sender never learns it.
//
// Checkpoints (Flink's aligned barriers) and exactly-once restarts: a
// sender marks checkpoints in its stream with send_barrier; a receiver with
// Acknowledge::Checkpoint commits what a durable checkpoint holds, and only
// then does the sender forget it: a restored receiver is sent again every
// message after the last commit. continue_streams, resume_stream and
// first_seq let a stream go on across restarted senders and receivers with
// every message taken once (io/WIRE_FORMAT.md, "Checkpoints").
//
// Live updates: a sender asks the receiving process to apply new values
// to a named target (a pipeline stage's accumulator) with send_update; it
// travels in the stream like data. A reliable receiver that cannot apply
// one says so to its sender with refuse(), and the sender lists what was
// refused in refusals() (io/WIRE_FORMAT.md, "Updates and refusals").
//
// Thread safety: a Channel is used by one thread at a time (ZeroMQ sockets
// are not thread-safe), except ack(), acknowledger(), commit(),
// committer() and refusals(), which any thread may call (and a reliable
// sending channel's counters(), which never waits for the channel's work);
// different Channels may be used concurrently.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sluice/io/wire.h>

namespace sluice {

enum class Pattern : uint8_t { Push, Pull, Pub, Sub, Pair };

enum class Delivery : uint8_t {
  Reliable,  // push and pull: credit, acknowledgements, heartbeats, resending (pub, sub, pair stay plain)
  Plain,     // raw ZeroMQ
};

enum class Acknowledge : uint8_t {
  OnNextRecv,  // reliable receiving: a message is done with when recv is called again (or the channel closes)
  Manual,      // the owner calls ack() once it has finished with a message (a pipeline, when every sink has it)
  // Durable acknowledgement, for checkpoints: ack() says the owner has
  // finished with a message, which frees credit, and commit() acknowledges
  // to the sender every message up to a seq (once a checkpoint holding
  // them is durable). The sender keeps what is not committed and sends it
  // again to a receiver that restarts: the replay a restored checkpoint needs.
  // Streams are then taken whole, from seq 0 or from where resume_stream
  // puts them: a sender that no longer keeps what comes there (it was
  // committed by a checkpoint the owner no longer has) is a loss recv reports.
  Checkpoint,
};

// CurveZMQ on tcp (io/curve.h makes the certificates; `sluice keygen`
// too). A receiving channel with `secret` is a server: it takes senders
// whose public certificate is in `allow` and refuses every other peer,
// plaintext ones included. A sending channel with `secret` is a client of
// the receiver whose public certificate is `server`.
struct CurveOptions {
  std::string secret{};  // this side's secret certificate (NAME_secret); empty: no CurveZMQ
  std::string server{};  // sending: the receiver's public certificate
  std::string allow{};   // receiving: a directory of allowed senders' public certificates
};

struct ChannelOptions {
  Delivery delivery = Delivery::Reliable;
  int send_high_water_mark = 1000;  // plain: messages queued per peer before send blocks (push, pair) or drops (pub)
  int recv_high_water_mark = 1000;  // messages ZeroMQ queues per peer on the receiving side
  // The most bytes one message's frames may hold together. A larger message
  // is rejected: a plain peer sending a larger frame is disconnected by
  // ZeroMQ before the frame is buffered; a reliable receiver announces the
  // limit, and its senders refuse larger messages with a WireError.
  int64_t max_message_bytes = int64_t{1} << 30;
  bool crc = false;                  // send a CRC-32C of the data frames
  // Data messages below this many bytes travel packed in one frame.
  size_t pack_below = 4096;
  // Reliable sending: coalescing (Kafka's linger). Messages of one frame
  // (packed data, ends of stream, barriers) sent within coalesce_delay of
  // each other travel together in one ZeroMQ frame of at most
  // coalesce_bytes (WIRE_FORMAT.md, "Batches"): a ZeroMQ message costs far
  // more than copying a small one. A message goes at once when the channel
  // has sent nothing for coalesce_delay, so a lone message waits for
  // nothing; in a burst, the batch goes when it is full or coalesce_delay
  // after its first message. flush sends what waits at once. A zero delay
  // sends every message alone (a latency-sensitive edge); so does a
  // receiver that does not take batches (an older or a Python one).
  std::chrono::microseconds coalesce_delay{50};
  size_t coalesce_bytes = 64 * 1024;
  std::vector<uint64_t> subscribe;   // sub: stream ids to receive; empty: all
  std::chrono::milliseconds linger{2000};  // how long close waits for unsent messages

  // ---- reliable mode
  // What a receiver grants each sender: at most this many messages, and
  // this many bytes, unacknowledged at once (one larger message is let
  // through alone). Both sides' memory is bounded by it. A receiver with
  // Acknowledge::Checkpoint grants, besides, what its owner has finished
  // and not committed, and a sender keeps that too beyond its own credit:
  // the sender's memory is then bounded by the credit and what is
  // finished between two commits.
  uint64_t credit_messages = 1000;
  uint64_t credit_bytes = uint64_t{256} << 20;
  // Each side sends a heartbeat when it has sent nothing else for an
  // interval; a peer unheard for missed_heartbeats intervals is dead.
  std::chrono::milliseconds heartbeat_interval{500};
  int missed_heartbeats = 6;
  // How long a sender waits for a dead or absent receiver to come (back)
  // before it fails, naming how many messages were not delivered; and how
  // long a receiver waits for a sender that went silent mid-stream (dead,
  // without its end of stream) before recv fails, naming what it took.
  std::chrono::milliseconds peer_timeout{60000};
  Acknowledge acknowledge = Acknowledge::OnNextRecv;
  // Sending: the seq of the first message; a reliable channel numbers its
  // messages from it, not from 0, so that a sender restored from a
  // checkpoint goes on with its stream's numbering. (Plain channels send
  // the seq the caller gives.)
  uint64_t first_seq = 0;
  // Receiving: senders with the same stream id are one stream, continued
  // by successive sessions (a sender process that was restarted). The
  // receiver keeps, per stream id, the next seq it takes; a sender session
  // it has not met whose stream it knows is taken from there (or from the
  // oldest message that sender keeps, when that is later). What it sends
  // below was taken before: dropped, counted as duplicates, and
  // acknowledged so that the sender forgets it. Off: each session is a
  // stream of its own, taken from the oldest message it keeps.
  bool continue_streams = false;
  // Same-host shared memory (reliable push and pull; WIRE_FORMAT.md,
  // "Shared memory"). A sender offers it; a receiver that can map the
  // sender's memory (the same host, the same user, the sender's /proc
  // visible) takes it. Tensors then stay where the sender wrote them and the
  // receiver reads them in place: a tensor in shared memory already (a
  // pipeline stage's outputs for such an edge, Tensor::to_shared) is not
  // copied at all, any other is copied once, into shared memory. The
  // sender's memory is reused only once the receiver has acknowledged the
  // message and let go of its tensors, which bounds the memory in use by the
  // credit. A received tensor below pack_below is copied out of the
  // sender's memory at once, so that keeping it (a chunk's labels) holds
  // none of its message's memory (the chunk's signal). Tensors travel in
  // frames, copied, when it is off on either end, the peer is on another
  // host or a plain ZeroMQ peer, the endpoint is inproc (frames lend the
  // tensors' memory in one process already), `crc` is set (a CRC is of
  // bytes that travel), or the message is small enough to travel packed
  // (pack_below).
  bool shared_memory = true;
  // Same-host rings (WIRE_FORMAT.md, "Rings"). A receiver that takes its
  // sender's shared memory also gives it a ring of this many bytes (a power
  // of two), and the sender's messages go through it rather than the
  // socket: no system call on either side while both are busy. A message
  // larger than a quarter of the ring takes the socket. 0: no rings. A
  // receiver that runs dry spins up to ring_spin on its rings before it
  // sleeps on its socket, where a sender that finds it asleep wakes it, so
  // that an idle edge costs no CPU. It spins only while spinning pays: when
  // its last wait for a message lasted over four times ring_spin, it sleeps
  // at once (a chunk every few hundred microseconds, as a stage's are,
  // would otherwise cost ring_spin of a core each, taken from the stages on
  // a machine with few cores).
  size_t ring_bytes = size_t{1} << 20;
  std::chrono::microseconds ring_spin{50};
  CurveOptions curve{};
};

// What a reliable channel has counted so far.
struct ChannelCounters {
  uint64_t rejected = 0;        // malformed messages skipped
  uint64_t duplicates = 0;      // receiving: messages taken before, dropped
  uint64_t resent = 0;          // sending: messages sent again
  uint64_t peers_lost = 0;      // peers declared dead (silent too long)
  uint64_t unacknowledged = 0;  // sending: messages sent and not yet acknowledged
  // Sending: messages it may still take before send waits (its credit, and
  // what its receiver grants for messages finished and not committed, less
  // what it keeps unacknowledged).
  uint64_t credit = 0;
  // Handshakes that failed: receiving with CurveZMQ, peers refused (an
  // unknown key, a plaintext peer); sending reliably, refusals by the receiver.
  uint64_t refused = 0;
  // Refusals of messages (Channel::refuse): receiving, those this channel
  // made; sending, those its receiver sent back (refusals() lists them).
  uint64_t refusals = 0;
  // Data and updates that went (sending) or came (receiving) as
  // shared-memory references, not copied frames.
  uint64_t shared = 0;
  // Sending: messages that went coalesced with others in a batch.
  uint64_t coalesced = 0;
  // Messages that went (sending) or came (receiving) through a same-host ring.
  uint64_t ringed = 0;
  // Records (credit, acknowledgements, refusals) that came (sending) or
  // went (receiving) back through a same-host ring rather than the socket.
  uint64_t records_ringed = 0;
  // Receiving: shared messages copied out of the sender's memory because
  // the owner held half the credit's worth of them already (counted in
  // `shared` too). A receiver whose owner keeps that many in flight wants
  // a larger credit.
  uint64_t copied = 0;
};

// A message a reliable sender's receiver refused (Channel::refuse): its
// seq, as the sender numbered it, and the receiver's reason.
struct Refusal {
  uint64_t seq = 0;
  std::string why{};
  friend bool operator==(const Refusal&, const Refusal&) = default;
};

class Channel {
 public:
  Channel(Pattern pattern, const std::string& endpoint, ChannelOptions options = {});
  ~Channel();  // a reliable receiver sends its last acknowledgements first
  Channel(Channel&&) noexcept;
  Channel& operator=(Channel&&) noexcept;

  // Sends one message, blocking while the peers' queues are full (plain
  // push, pair) or the receiver's credit is used up (reliable). Tensors'
  // data is not copied: ZeroMQ holds each buffer until it is on the wire
  // (reliable: until the receiver acknowledges it). A reliable channel
  // numbers its messages itself, 0, 1, 2... (from first_seq), and keeps the
  // stream id of its first message. WireError when the message cannot be
  // encoded or sent, is larger than the receiver takes, or (reliable) no
  // receiver was heard for peer_timeout: the error names how many messages
  // were not delivered.
  void send(const wire::Message& message);
  // The same, waiting at most `timeout` for room: false (nothing sent) when
  // there was none. A message is sent whole or not at all.
  bool send(const wire::Message& message, std::chrono::milliseconds timeout);
  // Taken by value: a list made for the call (send({t}, seq)) is moved, not copied.
  void send(std::vector<Tensor> tensors, uint64_t seq, uint64_t stream_id = 0);
  void send_end_of_stream(uint64_t seq, uint64_t stream_id = 0);
  void send_error(const std::string& what, uint64_t seq, uint64_t stream_id = 0);
  // A checkpoint barrier: every message sent before it belongs to
  // checkpoint `checkpoint`, every one after to the next. It travels in the
  // stream like data (reliable: numbered, kept, delivered in order) and
  // recv returns it (kind Barrier, .checkpoint set). The timed variant is
  // send's: false (nothing sent) when there was no room within `timeout`.
  void send_barrier(uint64_t checkpoint, uint64_t seq, uint64_t stream_id = 0);
  bool send_barrier(uint64_t checkpoint, uint64_t seq, uint64_t stream_id,
                    std::chrono::milliseconds timeout);
  // A request that the receiving process apply `tensors` to `target` (the
  // name of a pipeline stage, whose accumulator they replace). It travels
  // in the stream like data (reliable: numbered, kept, delivered in order)
  // and recv returns it (kind Update, .target and .tensors set); never
  // packed. WireError, before anything is sent, when `target` is empty,
  // longer than wire::kMaxTargetBytes or not UTF-8, or `tensors` is empty.
  void send_update(const std::string& target, const std::vector<Tensor>& tensors, uint64_t seq,
                   uint64_t stream_id = 0);

  // Reliable sending: waits until the receiver has acknowledged every
  // message sent, end of stream included, so that the process may exit.
  // WireError after `timeout` (or peer_timeout without a receiver), naming
  // how many messages are unacknowledged. Plain: returns at once.
  void flush(std::chrono::milliseconds timeout);

  // The next well-formed message (data, end of stream, error, checkpoint
  // barrier or update), waiting up to `timeout` (negative: forever);
  // nullopt on timeout. A malformed message is counted, logged (warn) with
  // the endpoint and the reason, and skipped. Reliable: WireError when a
  // stream was lost, once, naming the sender, the stream and the messages:
  // a sender silent past peer_timeout without its end of stream, or
  // (Acknowledge::Checkpoint) a sender that no longer keeps the messages
  // where its stream stands here; recv may be called again after it. Reliable: each message comes
  // once, in order, per sender; control messages are handled inside. A
  // barrier or an update is acknowledged like any other message (at the
  // next recv, or by ack).
  std::optional<wire::Message> recv(std::chrono::milliseconds timeout = std::chrono::milliseconds(-1));

  // Reliable receiving with Acknowledge::Manual: `message` (as recv gave
  // it) is done with. Messages are acknowledged to their sender in order:
  // the acknowledgement moves past n once n and everything before it are
  // acked. Any thread may call it; it is a no-op for plain channels.
  // With Acknowledge::Checkpoint it only says the owner has finished with
  // `message`: that frees credit, and the sender still keeps it until a commit.
  void ack(const wire::Message& message);
  // A copyable handle that acks from any thread, safe to call after the
  // channel is gone (it then does nothing): for callbacks that outlive it.
  std::function<void(uint64_t peer, uint64_t seq)> acknowledger();
  // Reliable receiving with Acknowledge::Checkpoint: acknowledges to the
  // sender `peer` (a message's .peer) every message up to and including
  // `seq` (finished or not: a commit finishes them), so that the sender
  // forgets them; what is not committed is sent again to the next receiver
  // if this one goes away. A seq below what is acknowledged already is a
  // no-op, and one beyond what was received counts as the last received.
  // Any thread may call it; it is sent at the next recv or keep_alive.
  // A no-op for plain channels; WireError on a reliable receiver with
  // another Acknowledge mode (its acks acknowledge already).
  // Reliable receiving, before the first recv: how messages are
  // acknowledged from now on, for an owner that learns it only when its
  // run starts (a pipeline's ZeroMQ source: Checkpoint when checkpoints are
  // stored, Manual otherwise). WireError once a sender has been met.
  void set_acknowledge(Acknowledge acknowledge);
  void commit(uint64_t peer, uint64_t seq);
  // A copyable handle that commits from any thread, safe to call after the
  // channel is gone (it then does nothing). WireError as commit.
  std::function<void(uint64_t peer, uint64_t seq)> committer();
  // Reliable receiving: stream `stream_id` stands at `next_seq`, as a
  // checkpoint restored says: its messages below are taken already.
  // Senders of that stream, new ones and the sessions already met, are
  // taken from next_seq on (or their oldest kept message, when later); what
  // they send below, a sender that replays from older seqs included, is
  // dropped, counted as duplicates and acknowledged (with
  // Acknowledge::Checkpoint, committed). With continue_streams the
  // position moves on as messages are taken; without, it stays a floor.
  // Owner thread; usable before the first recv. WireError on a channel that
  // is not a reliable receiver (a plain one cannot drop what it took before).
  void resume_stream(uint64_t stream_id, uint64_t next_seq);
  // Reliable receiving: sends due acknowledgements and heartbeats without
  // reading, for a receiver that holds a message it cannot hand on yet.
  void keep_alive();

  // Reliable receiving: tells the sender of `message` (as recv returned it)
  // that its owner refuses it, saying `why` (UTF-8; cut to
  // kMaxRefusalBytes at a character's boundary). The sender records it
  // (refusals()). The refusal goes to the sender at once, and always before
  // any acknowledgement that covers the message: refused before it is
  // acked (OnNextRecv: before the next recv), a sender's flush returns only
  // after the sender has it. It does not acknowledge: ack (or commit) the
  // message as usual. One refused after its acknowledgement went out still
  // reaches the sender, without that guarantee. Owner thread, as recv.
  // WireError on a channel that is not a reliable receiver (a plain
  // channel has no way back to its sender), for a message this channel did
  // not take (no .peer, an unknown sender, a seq not taken yet), or when
  // `why` is not UTF-8.
  void refuse(const wire::Message& message, const std::string& why);
  // The most bytes of a refusal's reason that travel (a refusal is read
  // with the control messages, in a bounded buffer).
  static constexpr size_t kMaxRefusalBytes = 1024;
  // Reliable sending: the messages the receiver refused so far, in the
  // order they came, once per seq (the last 1024 kept; counters().refusals
  // counts all). Refusals of seqs this channel never sent are ignored.
  // Empty for other channels. Any thread.
  std::vector<Refusal> refusals() const;

  uint64_t rejected() const;                  // malformed messages skipped so far
  const std::string& last_rejection() const;  // the reason for the last one
  ChannelCounters counters() const;
  // The address without '@' or '>'; for a binding channel, the one bound.
  const std::string& endpoint() const;
  // The address actually bound (tcp://127.0.0.1:54321 when bound to port *).
  std::string bound_endpoint() const;

  // The ZeroMQ context (libzmq's void*) every Channel's socket lives in:
  // raw ZeroMQ sockets made on it reach channels' inproc:// endpoints.
  static void* zmq_context();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
