#pragma once
// The inside of a Channel: its socket, the frames it moves, and the two
// ends of the reliable protocol (io/WIRE_FORMAT.md, "Reliable mode").
// Only io/channel*.cpp, io/reliable_*.cpp and io/request_reply.cpp include this.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <zmq.hpp>

#include <sluice/base/detail/circular_queue.h>
#include <sluice/devices/shared_memory.h>
#include <sluice/io/channel.h>
#include <sluice/io/detail/curve_socket.h>
#include <sluice/io/detail/shared_ring.h>

namespace sluice::channel_detail {

using Clock = std::chrono::steady_clock;

// One multipart message as read from a socket, kept whole in one owner so
// that a tensor made from a data frame keeps the frame alive.
struct Incoming {
  std::shared_ptr<std::vector<zmq::message_t>> parts;
  int64_t total = 0;     // bytes in every frame, kept or not
  size_t frames = 0;     // frames seen, kept or not
};

// Reads one message without waiting; false when none is there. Frames past
// `max_bytes` (or past max_frames) are read and dropped, never kept.
bool read_multipart(zmq::socket_ref socket, Incoming& in, int64_t max_bytes, size_t max_frames);
// in.parts[skip...] as received frames, each keeping every part alive.
std::vector<wire::ReceivedFrame> received_frames(const Incoming& in, size_t skip);
// WireError naming `where` when `in` holds more than max_bytes or max_frames.
void check_incoming(const Incoming& in, int64_t max_bytes, size_t max_frames, const std::string& where);
// The message in in.parts[skip...] (skip 1 on a ROUTER: its routing id),
// checked as above; `map` opens its shared-memory references.
wire::Message decode_incoming(const Incoming& in, size_t skip, int64_t max_bytes, size_t max_frames,
                              const std::string& where, const wire::MapShared& map);
// A MapShared that refuses every reference, saying `why`: for those who
// must not read shared memory (a plain channel cannot tell the sender when
// it has finished with it, a reliable one takes it only where it agreed to).
wire::MapShared refuse_shared(const std::string& why);
// Writes `frames` as one message, after `routing_id` when given (a ROUTER
// addressing a peer). `dont_wait`: false when ZeroMQ has no room (nothing
// written) or, on a ROUTER, no such peer. Frames of 1 KiB and more are lent,
// not copied: ZeroMQ holds a reference to their owner until they are sent.
bool write_frames(zmq::socket_ref socket, const std::vector<wire::Frame>& frames, const std::string* routing_id,
                  bool dont_wait);
// Writes messages of one frame each, of `sizes` bytes, as one batch frame
// (Kind::Batch; WIRE_FORMAT.md, "Batches"): `write(i, out)` writes message
// i's frame at `out`, straight into the batch. False as write_frames.
bool write_batch(zmq::socket_ref socket, uint64_t stream_id, uint64_t first_seq,
                 std::span<const size_t> sizes, const std::function<void(size_t, uint8_t*)>& write,
                 bool dont_wait);

// Waits on a socket (and an extra file descriptor, and a second, when >= 0)
// for input, up to `wait` (negative: forever). EINTR counts as woken.
// Whether the extra descriptor is readable.
bool wait_readable(zmq::socket_ref socket, int extra_fd, std::chrono::milliseconds wait, int second_fd = -1);

// How a connecting socket retries a peer that is not there yet: after
// 10 ms, doubling to 5 s for one that stays away. The processes of a
// partitioned pipeline connect and bind in no set order, and ZeroMQ's
// 100 ms default held every edge whose connect came first that long.
// False when ZeroMQ refuses the options (zmq_errno says why).
bool set_reconnect_backoff(void* socket);

// A reliable sender's routing id: 'S' and its session, 8 bytes little-endian.
std::string routing_id_of(uint64_t session);
// 0 when `id` is not one.
uint64_t session_of(const zmq::message_t& id);
// A random session id, never 0.
uint64_t new_session();

// The sending end: keeps every message until the receiver acknowledges it,
// sends within the receiver's credit, answers its heartbeats and requests,
// and sends everything unacknowledged again to a receiver that is new.
// The caller's thread does the work inside send and flush; a pacemaker
// thread does it while the caller is away (answers, beats, sends what new
// credit allows), under one mutex, so the socket is never used by two
// threads at once.
class ReliableSender {
 public:
  // `handshakes`: the socket's failed handshakes (the channel's, outliving the sender).
  ReliableSender(zmq::socket_t& socket, const ChannelOptions& options, const std::string& where,
                 HandshakeWatch* handshakes);
  ~ReliableSender();
  // Numbers `m` and keeps it, waiting while the sender already keeps its
  // own credit's worth (and what its receiver grants for messages finished
  // and not yet committed); false after `timeout` (negative: forever)
  // without room. WireError: see Channel::send.
  bool send(wire::Message&& m, std::chrono::milliseconds timeout);
  void flush(std::chrono::milliseconds timeout);
  // The counters read without the mutex, which send and flush hold while
  // they wait for the receiver: a metrics scrape must not wait with them.
  uint64_t unacknowledged() const { return published_.unacknowledged.load(); }
  uint64_t resent() const { return published_.resent.load(); }
  uint64_t peers_lost() const { return published_.peers_lost.load(); }
  uint64_t rejected() const { return published_.rejected.load(); }
  uint64_t refusals_received() const { return published_.refusals.load(); }
  uint64_t credit() const { return published_.credit.load(); }
  uint64_t shared() const { return published_.shared.load(); }
  uint64_t coalesced() const { return published_.coalesced.load(); }
  uint64_t ringed() const { return published_.ringed.load(); }
  uint64_t records_ringed() const { return published_.records_ringed.load(); }
  std::vector<Refusal> refusals() const;

 private:
  struct Kept {
    uint64_t seq;
    wire::Message message;            // encoded again when the receiver changes (data, updates)
    std::vector<wire::Frame> frames;  // as last encoded; none for a packed one until it takes the socket
    uint64_t bytes;                   // of the message in frames (what credit counts)
    // It travels packed in one frame (wire::packed_bytes weighed it): into
    // a ring it is written straight, without a frame made first.
    bool packed = false;
    bool shared = false;              // frames are shared-memory references
    std::vector<IpcDeviceId> devices;  // ... and device references for these devices
    Clock::time_point queued;         // when send took it: a batch waits at most coalesce_delay from it
    std::shared_ptr<void> outside;    // too large for the receiver's ring: its entry, in shared memory
  };
  // Its frames in the form the receiver takes (shared-memory references or
  // frames of its own), encoding it again when that is not the form it has.
  const std::vector<wire::Frame>& frames_for_receiver(Kept& k);
  // The bytes of the one frame it travels as to the receiver, 0 when it
  // takes more: a packed one is weighed, not encoded (a batch writes it
  // straight in, as a ring does).
  uint64_t one_frame_bytes(Kept& k);
  // Writes its one frame at `out`.
  void write_one_frame(const Kept& k, uint8_t* out) const;
  // Reads what the receiver sent, beats, and sends what the credit allows;
  // waits up to `wait` for the receiver when there is nothing to read.
  // Called with mutex_ held.
  // `flush_batch`: what waits to be coalesced goes now.
  void service(std::chrono::milliseconds wait, bool flush_batch = false);
  void handle(const wire::Message& m, Clock::time_point now);
  // An error record from the receiver: it refused message m.header.seq.
  void record_refusal(const wire::Message& m);
  // Sends what the receiver's credit allows: through its ring when it gave
  // one, else on the socket, coalescing one-frame messages into batches; a
  // batch not yet due (coalesce_delay) waits unless `flush_batch`.
  void transmit(Clock::time_point now, bool flush_batch = false);
  void transmit_through_ring(Clock::time_point now);
  // Takes the ring a receiver's record names (none: the socket). A ring
  // new to this sender, or none after one, starts from where the receiver
  // stands: what went into the ring before may not have been read.
  void use_ring(const wire::Message& record);
  // Leaves a ring found broken (`why`) for good: everything unacknowledged
  // goes again over the socket (the receiver drops what it has).
  void drop_ring(const std::string& why);
  // Takes a message the receiver sent (a record or a refusal), from the
  // socket or its ring's records lane; WireError for anything else.
  void take_from_receiver(const wire::Message& m, Clock::time_point now);
  // Takes the next record in the ring's records lane; false when none.
  bool take_ring_record(Clock::time_point now);
  // Sends again from `next` (at least the oldest message kept), what was
  // sent from there on being counted as resent.
  void rewind_to(uint64_t next);
  // Within the receiver's credit, message i goes after bytes_before; one
  // message above its byte credit goes alone.
  bool credit_allows(size_t i, uint64_t bytes_before) const;
  // The receiver's max_message_bytes, checked against message i before it goes.
  void check_size(size_t i) const;
  // Whether unacked_[i] may go in a batch (for this receiver, its frames as they go).
  bool batchable(Kept& k);
  // Writes it into the ring, unpublished; false when there is no room now.
  bool write_into_ring(Kept& k);
  // When the message waiting to be coalesced must go; nullopt when none waits.
  std::optional<Clock::time_point> batch_due() const;
  void send_heartbeat(Clock::time_point now);
  bool alive(Clock::time_point now) const;
  bool room_for(uint64_t bytes) const;
  // WireError when no receiver was heard for peer_timeout, or one refused
  // this sender at the handshake before any was heard: what is kept is
  // then not delivered.
  void check_receiver(Clock::time_point now, size_t waiting) const;
  uint64_t oldest() const { return unacked_.empty() ? next_seq_ : unacked_.front().seq; }
  void pace();  // the pacemaker thread
  // Copies the counters for the getters above; with mutex_ held, after
  // anything that changes them.
  void publish();

  zmq::socket_t& socket_;
  const ChannelOptions& options_;
  const std::string& where_;
  HandshakeWatch* const handshakes_;  // read with mutex_ held
  const wire::EncodeOptions encode_;
  const uint64_t session_;
  mutable std::mutex mutex_;  // guards the socket and everything below
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  detail::CircularQueue<Kept> unacked_;  // in seq order; [0, sent_) are on the wire, the rest wait for credit
  // Lists of tensors that acknowledged messages gave back, for the
  // messages send keeps: the caller's own list is freed at once, on its
  // thread (swap_in_spare_list).
  std::vector<std::vector<Tensor>> spare_lists_;
  // Keeps a spare list's room in place of `tensors`' (the same tensors in
  // it), so that the caller's list is freed when the caller's frees it
  // would have been: freed a hundred at a time at each acknowledgement,
  // they overflowed the allocator's per-thread cache, and every allocation
  // of the caller's took its slow path.
  void swap_in_spare_list(std::vector<Tensor>& tensors);
  void give_back_list(std::vector<Tensor>& tensors);
  size_t sent_ = 0;
  uint64_t unacked_bytes_ = 0, sent_bytes_ = 0;
  uint64_t next_seq_ = 0;
  std::optional<uint64_t> stream_id_;
  uint64_t receiver_ = 0;  // the receiver's session; 0 until one grants credit
  wire::Control grant_;    // what it granted last
  // The least credit this receiver has granted: its own credit. What it
  // grants above is for messages it has finished and not yet committed
  // (Acknowledge::Checkpoint), which this sender keeps beyond its own.
  uint64_t base_messages_ = 0, base_bytes_ = 0;
  uint64_t rewind_seen_ = 0;
  Clock::time_point opened_, last_heard_, last_sent_, last_serviced_;
  // How often send reads the socket for control messages while it has
  // room: reading a ZeroMQ socket costs system calls (a poll, a getpid),
  // and credit and acknowledgements come once per many messages.
  static constexpr std::chrono::microseconds kServiceInterval{100};
  bool heard_ = false;
  bool declared_dead_ = false;
  // Coalescing: whether the receiver takes batches (its records say so),
  // when data last went, and when the waiting pacemaker wakes
  // (time_point::min() while it runs), so that send wakes it only for a
  // batch due sooner.
  bool batches_ = false;
  Clock::time_point last_data_sent_{};
  Clock::time_point pacer_wakes_ = Clock::time_point::min();
  // The batch gathered so far while it waits, so that each send adds its
  // message rather than going over the batch again: it starts at
  // first_seq and holds `count` messages of `credit_bytes` (as credit
  // counts them) in `frame_bytes`. Forgotten when anything is sent and on
  // every record of the receiver (which may change what fits).
  struct Gathered {
    uint64_t first_seq = UINT64_MAX;
    size_t count = 0;
    uint64_t credit_bytes = 0;
    size_t frame_bytes = 0;
  };
  Gathered gathered_;
  // Shared memory: the probe this sender's heartbeats offer (8 bytes
  // holding its session, which a receiver reads to prove it maps this
  // process's memory), and whether the receiver takes references.
  std::shared_ptr<void> probe_;
  std::optional<SharedHandle> probe_handle_;
  bool share_ = false;
  // The devices whose memory the receiver opens (its last record's, when it shares).
  std::vector<IpcDeviceId> receiver_devices_;
  // Messages whose tensors a receiver may still view, by (seq, receiver):
  // acknowledged by it and listed in its records, or sent to a receiver
  // that went away (it may live on, holding them). Their frames keep the
  // shared memory from reuse until a record of that receiver no longer
  // lists them or, for a receiver gone, until its process has exited.
  std::map<std::pair<uint64_t, uint64_t>, std::vector<wire::Frame>> lent_;
  // The processes of the receivers that took shared memory, by session: a
  // pidfd of each, readable once it has exited. What was lent to a
  // receiver that is not the current one is reused once its process is
  // gone (a process's mappings go with it); one whose process this sender
  // cannot watch (pidfd_open failed: another pid namespace, an old kernel)
  // keeps it until the sender closes.
  std::map<uint64_t, int> receiver_processes_;
  Clock::time_point last_reclaimed_{};
  // Learns the process of receiver `session` from its record.
  void watch_receiver(uint64_t session, uint64_t pid);
  // Forgets what was lent to receivers, other than the current one, whose process is gone.
  void reclaim_from_gone_receivers(Clock::time_point now);
  // The receiver's ring for this sender, and the id of the last one that
  // could not be used (not asked for again).
  std::unique_ptr<RingWriter> ring_;
  uint64_t ring_refused_ = 0;
  uint64_t resent_ = 0, peers_lost_ = 0, rejected_ = 0, shared_ = 0, coalesced_ = 0, ringed_ = 0,
           records_ringed_ = 0;
  // What the receiver refused: the last kMaxRefusalsKept, once per seq;
  // refusals_received_ counts every one recorded.
  static constexpr size_t kMaxRefusalsKept = 1024;
  std::deque<Refusal> refusals_;
  uint64_t refusals_received_ = 0;
  struct Published {
    std::atomic<uint64_t> unacknowledged{0}, resent{0}, peers_lost{0}, rejected{0}, refusals{0}, credit{0},
        shared{0}, coalesced{0}, ringed{0}, records_ringed{0};
  };
  Published published_;
  std::thread pacemaker_;
};

// Acknowledgements (and commits) from any thread, taken by the receiving
// thread; it outlives the channel so that late callbacks find it.
struct AckQueue {
  enum class What : uint8_t {
    Done,     // the owner has finished with message seq
    Commit,   // Acknowledge::Checkpoint: every message up to seq is committed
    Release,  // the tensors of shared message seq are gone: its memory may be reused
  };
  struct Entry {
    uint64_t peer = 0;
    uint64_t seq = 0;
    What what = What::Done;
  };
  AckQueue();
  ~AckQueue();
  void push(uint64_t peer, uint64_t seq, What what = What::Done);
  std::vector<Entry> take();
  std::mutex mutex;
  std::vector<Entry> pending;
  // Whether `pending` may hold any: read without the mutex, so that a recv
  // with nothing pushed (one per message) takes no lock.
  std::atomic<bool> any{false};
  bool closed = false;
  int wake_fd = -1;  // an eventfd: readable while acks are pending
};

// The receiving end: takes each sender's messages once and in order,
// grants credit, acknowledges what its owner has finished with, beats, and
// asks a sender to resend from where a message went missing.
class ReliableReceiver {
 public:
  ReliableReceiver(zmq::socket_t& socket, const ChannelOptions& options, const std::string& where);
  bool met_any() const { return !peers_.empty(); }
  ~ReliableReceiver();
  std::optional<wire::Message> recv(std::chrono::milliseconds timeout);
  void keep_alive();
  std::shared_ptr<AckQueue> acks() const { return acks_; }
  void resume_stream(uint64_t stream_id, uint64_t next_seq);
  void refuse(const wire::Message& m, const std::string& why);
  uint64_t refusals_sent() const { return refusals_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t peers_lost() const { return peers_lost_; }
  uint64_t rejected() const { return rejected_; }
  uint64_t shared() const { return shared_; }
  uint64_t ringed() const { return ringed_; }
  uint64_t records_ringed() const { return records_ringed_; }
  uint64_t copied() const { return copied_; }
  const std::string& last_rejection() const { return last_rejection_; }

 private:
  struct Peer {
    std::string routing_id;
    uint64_t stream_id = 0;
    uint64_t expected = 0;       // the next seq to take
    uint64_t acked = 0;          // every seq below is done with (Checkpoint: finished)
    uint64_t committed = 0;      // Checkpoint: every seq below is committed, which is what acks say
    uint64_t acked_sent = 0;     // the acknowledgement the last record carried
    uint64_t sender_credit = 0;  // the credit its heartbeats say it keeps (0: not said)
    uint64_t finished_sent = 0;  // `acked` when the last record was sent (Checkpoint: its grant)
    uint64_t taken_unacked = 0;  // bytes taken since the last record was sent
    uint64_t confirmed = 0;      // what the sender's last heartbeat says it has had acknowledged
    std::set<uint64_t> done;     // done with, above `acked`
    // Checkpoint: the bytes of each message taken and not committed, and
    // the sum of those below `acked` (finished), which the grant adds.
    std::map<uint64_t, uint64_t> held;
    uint64_t finished_bytes = 0;
    // [skip_from, skip_until): taken before, by another session of the
    // stream or in a checkpoint restored; acknowledged as they arrive.
    uint64_t skip_from = 0, skip_until = 0;
    uint64_t rewind = 0;
    Clock::time_point rewound{}, last_heard{}, last_sent{};
    bool alive = true;
    // Where its stream stood when it was met, how far its heartbeats say it
    // has sent, and whether its first message was placed in its stream
    // (checked against where the stream stands: a gap is a loss).
    uint64_t first = 0, announced = 0;
    bool placed = false;
    bool ended = false;     // its end of stream was taken
    bool reported = false;  // silent past peer_timeout without its end: told to the owner
    // Refusals (error records) not yet written to the sender, oldest
    // first: each goes before any record, so before the acknowledgement
    // that covers its seq.
    std::deque<std::vector<wire::Frame>> refusals;
    // Shared memory: whether this receiver takes the sender's references
    // (decided once, at its first heartbeat, by reading its probe), the
    // sender's segments mapped so far, and the messages whose tensors still
    // view them with their bytes (leases): every record lists them, and the
    // sender reuses the memory of a message acknowledged only once it is
    // not listed, so never while a tensor here reads it.
    enum class Share : uint8_t { Unknown, Yes, No } share = Share::Unknown;
    SharedMappings mappings;
    std::map<uint64_t, uint64_t> leased;
    uint64_t leased_bytes = 0;
    bool leases_changed = false;  // since the last record
    // The ring its messages come through (it shares memory and is alive),
    // named in every record; ring_failed: one could not be made or was
    // found broken, and its messages take the socket.
    std::unique_ptr<RingReader> ring;
    bool ring_failed = false;
  };
  bool checkpoints() const { return options_.acknowledge == Acknowledge::Checkpoint; }
  // What a record tells the sender it may forget: every seq below.
  uint64_t acknowledgement(const Peer& p) const { return checkpoints() ? p.committed : p.acked; }
  // Whether `p` offers shared memory this receiver can map: its probe holds its session.
  bool takes_shared(const wire::Message& heartbeat) const;
  // A shared message taken: its tensors hold a lease that tells this
  // receiver when they are gone, or, when the sender's memory held here
  // is half the credit already, they become copies and it is free at once.
  void lease(Peer& p, wire::Message& m);
  // Sends the acknowledgements due: a batch's worth (an eighth of the
  // credit) per sender, or with flush_all everything done with; commits at once.
  void take_acks(bool flush_all);
  // How long the socket stays quiet before recv acknowledges all it can.
  static constexpr std::chrono::milliseconds kAckDelay{1};
  // Acknowledgements go at least every kAckBytes taken: a sender reuses
  // the memory of messages acknowledged while it is still in its cache
  // (1 MiB messages between processes: 5.5-6.5x raw ZeroMQ acknowledged
  // every few, 3.4-3.9x every eighth of the credit, 125).
  static constexpr uint64_t kAckBytes = uint64_t{4} << 20;
  // Entries recv reads from a ring at once: a few, so that what it
  // allocates for them is freed before the next few are read (a burst of
  // hundreds would overflow the allocator's per-thread caches).
  static constexpr size_t kRingReadsPerRecv = 4;
  void mark_done(uint64_t session, uint64_t seq);
  void mark_done(Peer& p, uint64_t seq);
  // A sender session met for the first time, at its heartbeat `h`.
  Peer& meet(uint64_t session, const wire::Header& h);
  // Takes `p` from `seq` on: what comes below is dropped and acknowledged.
  void skip_to(Peer& p, uint64_t seq);
  // A duplicate in the range skipped: acknowledged.
  void skip(Peer& p, uint64_t seq);
  // `p`'s message `expected` is the owner's now (`bytes` in its frames); untake gives the last one back.
  void take(Peer& p, uint64_t bytes);
  void untake(Peer& p);
  // Moves `acked` past the next seq, or up to `seq`: finished.
  void finish_next(Peer& p);
  void finish_below(Peer& p, uint64_t seq);
  // Checkpoint: every message below `seq` (at most `expected`) is committed, and so finished.
  void commit_below(Peer& p, uint64_t seq);
  // Sends heartbeats, finds senders silent too long (dead, then lost: lost_).
  void beat(Clock::time_point now);
  // WireError naming every loss found since the last call, if any.
  void throw_losses();
  // Whether a later session of p's stream took it on (continue_streams).
  bool continued(const Peer& p) const;
  // Where stream `stream_id` stands for a session's first message: from
  // resume_stream or an earlier session, else (Checkpoint: streams are
  // taken whole) 0; nullopt: anywhere.
  std::optional<uint64_t> floor_of(uint64_t stream_id) const;
  void send_control(Peer& p, wire::Kind kind, Clock::time_point now);
  // Writes a record or a refusal to p: through its ring's records lane
  // when its sender reads it there (a doorbell on the socket too, when the
  // sender sleeps there), else on the socket. False when it did not go
  // (write_frames); zmq::error_t as it.
  bool write_to_sender(Peer& p, const std::vector<wire::Frame>& frames);
  // Writes p's pending refusals in order; false when one could not go yet
  // (no room, the sender not connected): it stays, and so must any record.
  bool send_refusals(Peer& p);
  // The sender of a message recv returned; WireError when it is not one.
  Peer& taker_of(const wire::Message& m);
  void ask_resend(Peer& p, Clock::time_point now);
  // Takes what one read from the socket holds: the messages for the owner
  // go to ready_ (none for control, duplicates, messages out of order; a
  // batch's, in order).
  void accept(Incoming& in, Clock::time_point now);
  // One message of sender `session`, in `frames` of `bytes` (what credit counts).
  void accept_one(uint64_t session, std::span<const wire::ReceivedFrame> frames, uint64_t bytes,
                  Clock::time_point now);
  // A message that could not be read still takes its place in the stream
  // (its header, when that reads, says which), or its sender would send it
  // again for ever; a batch's header names `count` places from its seq.
  void take_unreadable(uint64_t session, wire::Bytes header_frame, uint64_t bytes);
  // Takes what the senders' rings hold (a bounded number of entries per
  // sender) as accept does a socket's messages; whether any came.
  bool read_rings(Clock::time_point now);
  void read_ring(uint64_t session, Peer& p, Clock::time_point now, size_t most = SIZE_MAX);
  // Whether any sender's messages come through a ring.
  bool any_ring() const;
  // Sets every ring's sleeping flag for a wait on the socket; false (none
  // set) when an entry came meanwhile.
  bool sleep_on_rings();
  void wake_rings();
  // The next message of ready_ for the owner.
  std::optional<wire::Message> hand_on();
  void reject(const std::string& why);

  zmq::socket_t& socket_;
  const ChannelOptions& options_;
  const std::string& where_;
  const uint64_t session_;
  std::unordered_map<uint64_t, Peer> peers_;
  std::shared_ptr<AckQueue> acks_;
  std::optional<std::pair<uint64_t, uint64_t>> handed_;  // OnNextRecv: the last message recv returned
  // Per stream id, the next seq to take (continue_streams, resume_stream).
  std::unordered_map<uint64_t, uint64_t> streams_;
  uint64_t duplicates_ = 0, peers_lost_ = 0, rejected_ = 0, refusals_ = 0, shared_ = 0, ringed_ = 0,
           records_ringed_ = 0, copied_ = 0;
  bool reading_ring_ = false;  // read_ring is under way: a heartbeat among its entries reads no ring
  // Whether the receiver's last wait for a message, from running dry to
  // its arrival, was within kSpinPaysWithin times ring_spin: whether
  // spinning before sleeping pays (a wait a little longer than the spin is
  // still better spun: the wake-up after it costs tens of microseconds).
  // While it does not, one dry spell in kSpinProbe spins anyway: a wait
  // that slept lasts as long as the wake-up at least, and could not tell
  // that the messages come close together again.
  bool spin_pays_ = true;
  // Rung by senders of this host that write into its rings, rather than
  // the socket: made with the first ring, none if the system gave no pipe.
  std::unique_ptr<Doorbell> doorbell_;
  bool doorbell_failed_ = false;
  bool closing_ = false;  // its control messages ask for confirmation (kFlagConfirm)
  uint32_t dry_spells_ = 0;
  static constexpr uint32_t kSpinProbe = 8;
  static constexpr int kSpinPaysWithin = 4;
  // Losses found and not yet told: recv throws them, one WireError for all.
  std::vector<std::string> lost_;
  // Messages taken and not yet returned by recv, in order: the rest of a
  // batch, or one taken as a loss was found (recv throws the loss first).
  detail::CircularQueue<wire::Message> ready_;
  std::string last_rejection_;
};

}  // namespace sluice::channel_detail

namespace sluice {

struct Channel::Impl {
  // Closes the socket and, for an ipc path it bound, waits (bounded) until
  // ZeroMQ's I/O thread has closed the listener too: ZeroMQ closes sockets
  // asynchronously, and a channel made next on the same path would find it
  // still taken.
  ~Impl();
  Pattern pattern;
  std::string endpoint;
  std::string where;  // "channel ENDPOINT", as errors name it: made once, not per message
  std::string bound;  // the address bound or connected to, read once (the socket may be busy later)
  std::string ipc_path;  // the Unix socket path bound, if any
  ChannelOptions options;
  zmq::socket_t socket;
  uint64_t rejected = 0;
  std::string last_rejection;
  // A receiver's CurveZMQ server; a reliable sender's watch on its
  // handshakes (a receiver that refuses it is named in its errors). ~Impl
  // ends both before it closes the socket.
  std::unique_ptr<CurveServer> curve;
  std::unique_ptr<HandshakeWatch> handshakes;
  std::unique_ptr<channel_detail::ReliableSender> sender;
  std::unique_ptr<channel_detail::ReliableReceiver> receiver;
};

}  // namespace sluice
