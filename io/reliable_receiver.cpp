// The receiving end of the reliable protocol (io/WIRE_FORMAT.md, "Reliable
// mode"). The owner's thread runs it inside recv and keep_alive; other
// threads only queue acknowledgements (AckQueue), waking it through an
// eventfd it polls beside the socket.

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include <sluice/base/detail/log.h>
#include <sluice/io/detail/channel_impl.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::channel_detail {
namespace {

std::chrono::milliseconds ms(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

// The first frame of a message read by a ROUTER (frame 0 is the routing
// id); empty when there is none.
wire::Bytes first_frame(const Incoming& in) {
  if (in.parts->size() < 2) return {};
  const zmq::message_t& f = (*in.parts)[1];
  return {static_cast<const uint8_t*>(f.data()), f.size()};
}

// The header `frame` starts with, or nullopt when none reads.
std::optional<wire::Header> header_of(wire::Bytes frame) {
  try {
    return wire::read_header(frame, "", /*packed_ok=*/true);
  } catch (const WireError&) {
    return std::nullopt;
  }
}

}  // namespace

AckQueue::AckQueue() : wake_fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_fd < 0) throw WireError(error_message("channel", "eventfd for acknowledgements failed", "", ""));
}

AckQueue::~AckQueue() { ::close(wake_fd); }

void AckQueue::push(uint64_t peer, uint64_t seq, What what) {
  bool wake = false;
  {
    std::lock_guard lock(mutex);
    if (closed) return;
    wake = pending.empty();
    pending.push_back({peer, seq, what});
    any.store(true, std::memory_order_release);
  }
  // One wake-up per batch: the receiving thread takes them all at once.
  if (wake) {
    uint64_t one = 1;
    (void)!::write(wake_fd, &one, sizeof one);
  }
}

std::vector<AckQueue::Entry> AckQueue::take() {
  std::vector<Entry> out;
  if (!any.load(std::memory_order_acquire)) return out;
  std::lock_guard lock(mutex);
  if (pending.empty()) return out;  // nothing pushed, so no wake-up to drain: no system call per message
  out.swap(pending);
  any.store(false, std::memory_order_relaxed);
  uint64_t drained;
  (void)!::read(wake_fd, &drained, sizeof drained);
  return out;
}

ReliableReceiver::ReliableReceiver(zmq::socket_t& socket, const ChannelOptions& options, const std::string& where)
    : socket_(socket),
      options_(options),
      where_(where),
      session_(new_session()),
      acks_(std::make_shared<AckQueue>()) {}

ReliableReceiver::~ReliableReceiver() {
  // What the owner finished with is acknowledged before the socket closes,
  // and each sender's heartbeat confirms it has the acknowledgement: what a
  // process queues just before it exits can be lost whatever the linger
  // time, and a sender waiting for it would wait its whole timeout.
  try {
    // From here every control message asks its sender to confirm it; one
    // sent before without asking is sent again.
    closing_ = true;
    const Clock::time_point closing_at = Clock::now();
    take_acks(/*flush_all=*/true);
    auto unconfirmed = [](const Peer& p) { return p.alive && p.confirmed < p.acked_sent; };
    for (auto& [session, p] : peers_)
      if (unconfirmed(p) && p.last_sent < closing_at) send_control(p, wire::Kind::Ack, closing_at);
    const Clock::time_point deadline = Clock::now() + options_.linger;
    auto any_unconfirmed = [&] {
      return std::any_of(peers_.begin(), peers_.end(),
                         [&](const auto& entry) { return unconfirmed(entry.second); });
    };
    Incoming in;
    const auto max_frames = static_cast<size_t>(options_.max_message_bytes / 32 + 2);
    while (any_unconfirmed() && Clock::now() < deadline) {
      if (!read_multipart(socket_, in, options_.max_message_bytes, max_frames)) {
        wait_readable(socket_, -1, std::chrono::milliseconds(10));
        continue;
      }
      // Only heartbeats matter now; data is left for the sender to send to
      // the next receiver (it was not acknowledged, nor taken).
      accept(in, Clock::now());
    }
    // Nor what was taken and never handed on: given back, last first.
    for (; !ready_.empty(); ready_.pop_back()) untake(peers_.at(ready_.back().peer));
  } catch (const std::exception& e) {
    logger().warn("{}: last acknowledgements not confirmed: {}", where_, e.what());
  }
  std::lock_guard lock(acks_->mutex);
  acks_->closed = true;
}

void ReliableReceiver::reject(const std::string& why) {
  ++rejected_;
  last_rejection_ = why;
  logger().warn("{} (message skipped)", why);
}

namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// At most `limit` bytes of the UTF-8 `text`, never half a character: a
// refusal's reason must stay UTF-8 for the sender's reader to take it.
std::string cut_utf8(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t n = limit;
  // text[n] is the first byte left out: back up while it continues a character.
  while (n > 0 && (static_cast<uint8_t>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

}  // namespace

bool ReliableReceiver::write_to_sender(Peer& p, const std::vector<wire::Frame>& frames) {
  switch (p.ring ? p.ring->write_record(frames) : RingReader::Record::NotWritten) {
    case RingReader::Record::Written: ++records_ringed_; return true;
    case RingReader::Record::ToASleeper:
      ++records_ringed_;
      // A doorbell (one empty frame) wakes it; with no room for that, its
      // next look at the lane finds the record.
      write_frames(socket_, {wire::Frame{}}, &p.routing_id, /*dont_wait=*/true);
      return true;
    case RingReader::Record::NotWritten: break;
  }
  return write_frames(socket_, frames, &p.routing_id, /*dont_wait=*/true);
}

bool ReliableReceiver::send_refusals(Peer& p) {
  while (!p.refusals.empty()) {
    try {
      if (!write_to_sender(p, p.refusals.front())) return false;
    } catch (const zmq::error_t& e) {
      if (e.num() != EHOSTUNREACH && e.num() != EINTR)
        throw WireError(
            error_message(where_, fmt::format("refusal to a sender failed: {}", e.what()), "", ""));
      return false;  // not connected now: it goes when the sender is back, before anything else
    }
    p.refusals.pop_front();
  }
  return true;
}

ReliableReceiver::Peer& ReliableReceiver::taker_of(const wire::Message& m) {
  const std::string at = fmt::format("{}: refuse: seq {}", where_, m.header.seq);
  auto it = m.peer == 0 ? peers_.end() : peers_.find(m.peer);
  if (it == peers_.end())
    throw WireError(error_message(at, "", "a message recv returned on this channel (its sender's session)",
                                  m.peer == 0 ? "none (peer 0)" : "an unknown sender session"));
  if (m.header.seq >= it->second.expected)
    throw WireError(error_message(
        at, "", fmt::format("a message this channel took (below seq {} of that sender)", it->second.expected),
        "one it has not taken"));
  return it->second;
}

void ReliableReceiver::refuse(const wire::Message& m, const std::string& why) {
  Peer& p = taker_of(m);
  if (!wire::valid_utf8({reinterpret_cast<const uint8_t*>(why.data()), why.size()}))
    throw WireError(error_message(fmt::format("{}: refuse: seq {}", where_, m.header.seq), "reason",
                                  "UTF-8 text", "invalid bytes"));
  wire::Message error;
  error.header = {wire::Kind::Error, 0, p.stream_id, m.header.seq, 0, 0};
  error.error = cut_utf8(why, Channel::kMaxRefusalBytes);
  p.refusals.push_back(wire::encode(error));
  ++refusals_;
  logger().debug("{}: refused seq {} of stream {}: {}", where_, m.header.seq, p.stream_id, error.error);
  // At once, so that the sender learns it as early as possible; what cannot
  // go now goes before the next record (send_control), so before any ack.
  send_refusals(p);
}

void ReliableReceiver::send_control(Peer& p, wire::Kind kind, Clock::time_point now) {
  if (!send_refusals(p)) {
    logger().debug("{}: {} to a sender (stream {}) held back: a refusal before it is not sent yet", where_,
                   wire::kind_name(kind), p.stream_id);
    return;
  }
  wire::Message m;
  m.header = {
      kind,        static_cast<uint16_t>(wire::kFlagTakesBatches | (closing_ ? wire::kFlagConfirm : 0)),
      p.stream_id, acknowledgement(p),
      0,           0};
  if (p.share == Peer::Share::Yes) {
    m.shared = true;
    for (const auto& [seq, bytes] : p.leased) m.leases.push_back(seq);
    m.pid = static_cast<uint64_t>(::getpid());  // the sender reuses what it lent once this process is gone
    // A sender on this host writes its messages into a ring; one made anew
    // (this sender came back after it was lost) says to start again from `expected`.
    if (!p.ring && !p.ring_failed && p.alive && options_.ring_bytes > 0) {
      try {
        if (!doorbell_ && !doorbell_failed_) {
          try {
            doorbell_ = std::make_unique<Doorbell>();
          } catch (const WireError& e) {
            doorbell_failed_ = true;  // its senders ring the socket
            logger().info("{}: {}; senders on this host wake it through the socket", where_, e.what());
          }
        }
        p.ring = std::make_unique<RingReader>(options_.ring_bytes, session_, doorbell_.get(), where_);
      } catch (const Error& e) {
        p.ring_failed = true;
        logger().info("{}: no ring for sender (stream {}); its messages take the socket: {}", where_,
                      p.stream_id, e.what());
      }
    }
    if (p.ring) m.ring = p.ring->handle();
    // The GPUs this process has: their tensors come as device references.
    m.devices = ipc_devices_here();
    if (m.devices.size() > wire::kMaxDevices) m.devices.resize(wire::kMaxDevices);
  }
  // Checkpoint: what the owner finished and has not committed stays with
  // the sender (it is sent again if this receiver restarts), and the grant
  // makes room for it, so that the window of messages not yet finished
  // stays the credit however seldom the owner commits.
  const uint64_t finished = checkpoints() ? p.acked - p.committed : 0;
  m.control = {session_,
               p.expected,
               saturating_add(options_.credit_messages, finished),
               saturating_add(options_.credit_bytes, p.finished_bytes),
               static_cast<uint64_t>(options_.max_message_bytes),
               p.rewind};
  try {
    // No room, or the sender is gone: the next beat says it all again.
    if (write_to_sender(p, wire::encode(m))) {
      p.last_sent = now;
      p.leases_changed = false;
      p.acked_sent = acknowledgement(p);
      p.finished_sent = p.acked;
      p.taken_unacked = 0;
    } else {
      logger().debug("{}: {} to a sender (stream {}) not sent: no room", where_, wire::kind_name(kind), p.stream_id);
    }
  } catch (const zmq::error_t& e) {
    if (e.num() != EHOSTUNREACH && e.num() != EINTR)
      throw WireError(error_message(where_, fmt::format("send to a sender failed: {}", e.what()), "", ""));
    logger().debug("{}: {} to a sender (stream {}) not sent: {}", where_, wire::kind_name(kind), p.stream_id, e.what());
  }
}

void ReliableReceiver::ask_resend(Peer& p, Clock::time_point now) {
  // One request per heartbeat interval: messages already on their way
  // after the gap arrive (and are dropped) before the sender goes back.
  if (p.rewind != 0 && now - p.rewound < options_.heartbeat_interval) return;
  ++p.rewind;
  p.rewound = now;
  send_control(p, wire::Kind::Credit, now);
}

void ReliableReceiver::finish_next(Peer& p) {
  if (checkpoints()) {
    auto it = p.held.find(p.acked);
    if (it != p.held.end()) p.finished_bytes += it->second;
  }
  ++p.acked;
}

void ReliableReceiver::finish_below(Peer& p, uint64_t seq) {
  if (checkpoints()) {
    for (auto it = p.held.lower_bound(p.acked); it != p.held.end() && it->first < seq; ++it)
      p.finished_bytes += it->second;
  }
  p.acked = std::max(p.acked, seq);
  p.done.erase(p.done.begin(), p.done.lower_bound(p.acked));
  while (!p.done.empty() && *p.done.begin() == p.acked) {
    p.done.erase(p.done.begin());
    finish_next(p);
  }
}

void ReliableReceiver::commit_below(Peer& p, uint64_t seq) {
  // Nothing beyond what this receiver took: the sender would forget
  // messages no one has.
  seq = std::min(seq, p.expected);
  if (seq <= p.committed) return;  // acknowledged already
  if (seq > p.acked) finish_below(p, seq);
  for (auto it = p.held.begin(); it != p.held.end() && it->first < seq; it = p.held.erase(it))
    p.finished_bytes -= it->second;
  p.committed = seq;
}

void ReliableReceiver::take(Peer& p, uint64_t bytes) {
  if (checkpoints()) p.held.emplace(p.expected, bytes);
  ++p.expected;
  if (options_.continue_streams) {
    uint64_t& next = streams_[p.stream_id];
    next = std::max(next, p.expected);
  }
}

void ReliableReceiver::untake(Peer& p) {
  --p.expected;
  p.held.erase(p.expected);
  auto stream = streams_.find(p.stream_id);
  if (options_.continue_streams && stream != streams_.end() && stream->second == p.expected + 1)
    stream->second = p.expected;
}

ReliableReceiver::Peer& ReliableReceiver::meet(uint64_t session, const wire::Header& h) {
  Peer& p = peers_[session];
  p.routing_id = routing_id_of(session);
  p.stream_id = h.stream_id;
  // It keeps everything from h.seq on; every message before was done with.
  p.expected = p.acked = p.committed = p.acked_sent = p.finished_sent = p.first = p.announced = h.seq;
  // Where its stream stood (a session before, a checkpoint) applies as its
  // messages come: see accept.
  logger().debug("{}: sender {:016x} (stream {}) starts at seq {}", where_, session, h.stream_id, h.seq);
  return p;
}

void ReliableReceiver::skip_to(Peer& p, uint64_t seq) {
  if (p.skip_until != p.expected) p.skip_from = p.expected;  // else: one range, extended
  p.skip_until = seq;
  p.expected = seq;
}

void ReliableReceiver::skip(Peer& p, uint64_t seq) {
  // Taken before means done with before; with checkpoints, committed too
  // (the checkpoint that says where the stream stood holds it).
  mark_done(p, seq);
  if (checkpoints()) commit_below(p, seq + 1);
}

void ReliableReceiver::resume_stream(uint64_t stream_id, uint64_t next_seq) {
  streams_[stream_id] = next_seq;  // sessions met or not: accept applies it to their next message
  // Taken already but not handed on (the rest of a batch): dropped as
  // accept drops what comes below the stream's position.
  ready_.keep_if([&](const wire::Message& m) {
    auto peer = peers_.find(m.peer);
    if (peer == peers_.end() || m.header.stream_id != stream_id || m.header.seq >= next_seq) return true;
    ++duplicates_;
    skip(peer->second, m.header.seq);
    return false;
  });
}

void ReliableReceiver::mark_done(uint64_t session, uint64_t seq) {
  auto it = peers_.find(session);
  if (it != peers_.end()) mark_done(it->second, seq);
}

void ReliableReceiver::mark_done(Peer& p, uint64_t seq) {
  if (seq < p.acked) return;
  if (seq == p.acked && p.done.empty()) {  // in order, the usual case: no set to keep
    finish_next(p);
    return;
  }
  p.done.insert(seq);
  finish_below(p, p.acked);
}

void ReliableReceiver::take_acks(bool flush_all) {
  if (handed_ && (options_.acknowledge == Acknowledge::OnNextRecv)) {
    mark_done(handed_->first, handed_->second);
    handed_.reset();
  }
  for (const AckQueue::Entry& e : acks_->take()) {
    switch (e.what) {
      case AckQueue::What::Done: mark_done(e.peer, e.seq); break;
      case AckQueue::What::Commit:
        if (auto it = peers_.find(e.peer); it != peers_.end())
          commit_below(it->second, e.seq == UINT64_MAX ? e.seq : e.seq + 1);
        break;
      case AckQueue::What::Release:
        if (auto it = peers_.find(e.peer); it != peers_.end()) {
          Peer& p = it->second;
          auto lease = p.leased.find(e.seq);
          if (lease == p.leased.end()) break;
          p.leased_bytes -= lease->second;
          p.leased.erase(lease);
          p.leases_changed = true;
        }
        break;
    }
  }
  // Batched: an ack per message would double the messages on the wire.
  // A commit goes at once: its owner batches them already (one a
  // checkpoint), and the sender's memory waits for it. The clock is read
  // only for what goes: this runs at every recv, and a read costs as much
  // as a small message's decoding.
  std::optional<Clock::time_point> now;
  for (auto& [session, p] : peers_) {
    // An eighth of the smaller credit: a sender that keeps fewer messages
    // than this receiver grants fills them up before a batch of ours.
    const uint64_t credit =
        p.sender_credit > 0 ? std::min(options_.credit_messages, p.sender_credit) : options_.credit_messages;
    const uint64_t batch = std::max<uint64_t>(1, credit / 8);
    const bool acknowledges = acknowledgement(p) > p.acked_sent;
    const uint64_t finished = p.acked - p.finished_sent;  // Checkpoint: credit it frees
    // Leases let go of go when the socket is quiet, if nothing else goes before.
    const bool released = p.leases_changed && flush_all;
    if ((checkpoints() && acknowledges) ||
        (finished > 0 && (flush_all || finished >= batch || p.taken_unacked >= kAckBytes)) || released) {
      if (!now) now = Clock::now();
      send_control(p, acknowledges ? wire::Kind::Ack : wire::Kind::Credit, *now);
    }
  }
}

bool ReliableReceiver::continued(const Peer& p) const {
  if (!options_.continue_streams) return false;
  for (const auto& [session, q] : peers_)
    if (&q != &p && q.stream_id == p.stream_id && q.last_heard > p.last_heard) return true;
  return false;
}

std::optional<uint64_t> ReliableReceiver::floor_of(uint64_t stream_id) const {
  if (auto it = streams_.find(stream_id); it != streams_.end()) return it->second;
  if (checkpoints()) return 0;
  return std::nullopt;
}

void ReliableReceiver::beat(Clock::time_point now) {
  const auto dead_after = options_.heartbeat_interval * options_.missed_heartbeats;
  for (auto& [session, p] : peers_) {
    // A sender that went silent mid-stream and stayed away past
    // peer_timeout (as long as a sender waits for its receiver) is not
    // coming back: its stream ended without its end, and the owner is told.
    const bool started = p.expected > p.first || p.announced > p.expected;
    if (!p.alive && !p.ended && !p.reported && started && now - p.last_heard > dead_after + options_.peer_timeout &&
        !continued(p)) {
      p.reported = true;
      const uint64_t unreceived = p.announced > p.expected ? p.announced - p.expected : 0;
      lost_.push_back(fmt::format(
          "{}: sender {:016x} (stream {}) silent for {} ms without its end of stream; its stream ended "
          "incomplete: {} message(s) taken{}{}",
          where_, session, p.stream_id, ms(now - p.last_heard).count(), p.expected - p.first,
          p.expected > p.first ? fmt::format(" (seq {}..{})", p.first, p.expected - 1) : "",
          unreceived > 0 ? fmt::format(", {} more it sent never arrived (seq {}..{})", unreceived, p.expected,
                                       p.announced - 1)
                         : ""));
      logger().error("{}", lost_.back());
    }
    if (now - p.last_sent >= options_.heartbeat_interval) send_control(p, wire::Kind::Heartbeat, now);
    if (p.alive && now - p.last_heard > dead_after) {
      // It may only be idle (a sender beats from inside its calls): its
      // state stays, so that it is known when it speaks again.
      p.alive = false;
      p.mappings.clear();  // tensors that view its memory keep their own mapping
      p.ring.reset();      // if it comes back, a new one: what it wrote since is not waited for
      ++peers_lost_;
      // Worth a warning only while its stream has no one else to go on.
      const bool orphaned = !p.ended && !continued(p);
      logger().log(orphaned ? spdlog::level::warn : spdlog::level::info, "{}: sender {:016x} (stream {}) silent for {} ms{}",
                   where_, session, p.stream_id, ms(now - p.last_heard).count(),
                   orphaned ? fmt::format(" without its end of stream; waiting up to {} ms for it to come back",
                                          options_.peer_timeout.count())
                            : "");
    }
  }
}

void ReliableReceiver::throw_losses() {
  if (lost_.empty()) return;
  std::string what;
  for (const std::string& l : lost_) what += (what.empty() ? "" : "; ") + l;
  lost_.clear();
  throw WireError(what);
}

void ReliableReceiver::keep_alive() {
  take_acks(/*flush_all=*/true);
  beat(Clock::now());
}

void ReliableReceiver::accept(Incoming& in, Clock::time_point now) {
  const uint64_t session = session_of((*in.parts)[0]);
  if (session == 0) {
    reject(where_ + ": a peer without a sluice sender's routing id (a plain push? set delivery = Plain on both ends)");
    return;
  }
  const wire::Bytes header_frame = first_frame(in);
  // A doorbell (one empty frame): a sender woke this receiver for what it
  // wrote into its ring, which recv reads next.
  if (in.frames == 2 && header_frame.empty()) return;
  const std::optional<wire::Header> h = header_of(header_frame);
  if (!peers_.contains(session)) {
    // A sender this receiver has not met: it restarted, or this receiver did
    // and the sender's socket still held what it had sent to the one before
    // (shared-memory references among it, agreed with that one). Only a
    // heartbeat, which meets it, is read; anything else gets credit, which
    // makes it say where its stream stands and send again from there.
    if (h && h->kind != wire::Kind::Heartbeat && !wire::is_control(h->kind)) {
      Peer p;
      p.routing_id = routing_id_of(session);
      p.stream_id = h->stream_id;
      send_control(p, wire::Kind::Credit, now);
      return;
    }
  }
  // What its sender wrote into its ring before this came first.
  if (auto it = peers_.find(session); it != peers_.end() && it->second.ring)
    read_ring(session, it->second, now);
  const uint64_t bytes =
      static_cast<uint64_t>(in.total) - (*in.parts)[0].size();  // the routing id's not counted
  const auto max_frames = static_cast<size_t>(options_.max_message_bytes / 32 + 2);
  try {
    check_incoming(in, options_.max_message_bytes, max_frames, where_);
    if (h && h->kind == wire::Kind::Batch) {
      if (in.frames != 2)
        throw WireError(
            error_message(fmt::format("{}: batch from seq {}", where_, h->seq), "frames", 1, in.frames - 1));
      const std::shared_ptr<void> owner(in.parts, &(*in.parts)[1]);
      for (wire::Bytes entry : wire::split_batch(header_frame, where_))
        accept_one(session, std::span<const wire::ReceivedFrame>({{entry, owner}}), entry.size(), now);
      return;
    }
  } catch (const WireError& e) {
    reject(e.what());
    take_unreadable(session, header_frame, bytes);
    return;
  }
  accept_one(session, received_frames(in, 1), bytes, now);
}

void ReliableReceiver::take_unreadable(uint64_t session, wire::Bytes header_frame, uint64_t bytes) {
  auto it = peers_.find(session);
  if (it == peers_.end()) return;
  Peer& p = it->second;
  const std::optional<wire::Header> h = header_of(header_frame);
  if (!h || h->seq != p.expected) return;
  // A batch's places: at most as many as its bytes could hold.
  const uint64_t places =
      h->kind != wire::Kind::Batch
          ? 1
          : std::min<uint64_t>(h->count,
                               header_frame.size() / (wire::kBatchEntryHeaderBytes + wire::kHeaderBytes));
  for (uint64_t i = 0; i < places; ++i) {
    take(p, h->kind == wire::Kind::Batch ? 0 : bytes);
    mark_done(p, p.expected - 1);
  }
}

void ReliableReceiver::accept_one(uint64_t session, std::span<const wire::ReceivedFrame> frames,
                                  uint64_t bytes, Clock::time_point now) {
  const wire::Bytes header_frame = frames.empty() ? wire::Bytes{} : frames[0].bytes;
  // Decoded in place (a message assigned after it is made costs a move and
  // a destruction of its many members, at every message).
  bool unreadable = false;
  // Looked up once: decoding changes no peer.
  auto it = peers_.find(session);
  wire::Message m = [&]() -> wire::Message {
    try {
      const auto known = it;
      const wire::MapShared map = [&](const SharedHandle& h) -> std::shared_ptr<void> {
        if (known == peers_.end() || known->second.share != Peer::Share::Yes)
          // The decoder names where (seq, tensor) around this.
          throw WireError(error_message(
              "", "a shared-memory reference from a sender this receiver did not agree to take them from", "",
              ""));
        return known->second.mappings.map(h);
      };
      // A device reference: a tensor on this process's GPU over the sender's
      // memory, no copy (only from a sender it named its devices to, which
      // shares memory with it).
      const wire::OpenDevice open = [&](std::string_view handle, const Spec& spec) {
        if (known == peers_.end() || known->second.share != Peer::Share::Yes)
          throw WireError(error_message(
              "", "a device reference from a sender this receiver did not agree to take references from", "",
              ""));
        TensorPointer pointer;
        pointer.mode = PointerMode::Ipc;
        pointer.handle = std::string(handle);
        return from_pointer(pointer, spec);
      };
      return wire::decode(frames, {.max_message_bytes = options_.max_message_bytes}, where_, map, open);
    } catch (const WireError& e) {
      reject(e.what());
      unreadable = true;
      return {};
    }
  }();
  if (unreadable) {
    take_unreadable(session, header_frame, bytes);
    return;
  }
  const wire::Header& h = m.header;
  if (h.kind == wire::Kind::Heartbeat) {
    // A sender saying where it stands: the oldest message it keeps (every
    // one before was done with, here or by a receiver before) and one past
    // the last it sent.
    Peer& p = it == peers_.end() ? meet(session, h) : it->second;
    // What it wrote into its ring before this beat comes first: its `next`
    // counts it.
    if (p.ring) read_ring(session, p, now);
    p.stream_id = h.stream_id;
    p.last_heard = now;
    p.alive = true;
    if (m.control.credit_messages > 0) p.sender_credit = m.control.credit_messages;
    if (p.share == Peer::Share::Unknown) p.share = takes_shared(m) ? Peer::Share::Yes : Peer::Share::No;
    p.confirmed = std::max(p.confirmed, h.seq);
    p.announced = std::max(p.announced, m.control.next);
    if (h.seq > p.expected) {
      // Done with before, here or by a receiver before: the sender forgot them.
      p.expected = h.seq;
      finish_below(p, h.seq);
      if (checkpoints()) commit_below(p, h.seq);
    }
    if (m.control.session == 0) {
      reject(where_ + ": heartbeat: expected the sender's session, found 0");
      return;
    }
    // Sent and not here: lost with a connection. Ask again from the gap.
    if (m.control.next > p.expected) {
      ask_resend(p, now);
    } else {
      send_control(p, wire::Kind::Credit, now);
    }
    return;
  }
  if (wire::is_control(h.kind)) {
    reject(error_message(fmt::format("{}: seq {}", where_, h.seq), "kind",
                         "data, end of stream, error, checkpoint barrier, update or heartbeat from a sender",
                         wire::kind_name(h.kind)));
    return;
  }
  Peer& p = it->second;  // met: by a heartbeat, the only message read from a sender not met
  p.last_heard = now;
  p.alive = true;
  if (h.seq < p.expected) {
    ++duplicates_;
    if (h.seq >= p.skip_from && h.seq < p.skip_until) {
      skip(p, h.seq);  // acknowledged with the next batch
    } else if (acknowledgement(p) == p.acked_sent) {
      send_control(p, wire::Kind::Ack, now);  // it went back past our ack: say it again
    }
    return;
  }
  if (h.seq > p.expected) {
    ask_resend(p, now);
    return;
  }
  // A stream that sessions before this one (or a checkpoint) took further:
  // what it sends below that was taken already. Checked on each message, not
  // when the session is met: a sender's first heartbeat may not name its
  // stream yet (it learns it from its first message).
  const std::optional<uint64_t> floor = floor_of(h.stream_id);
  if (floor && *floor > h.seq) {
    p.stream_id = h.stream_id;
    skip_to(p, *floor);
    ++duplicates_;
    skip(p, h.seq);
    return;
  }
  if (!p.placed && floor && *floor < h.seq) {
    // The sender no longer keeps what its stream had before this (it was
    // acknowledged, or committed by a checkpoint this receiver no longer
    // has), and this receiver never took it: lost, and said so once. The
    // stream goes on from here.
    lost_.push_back(error_message(
        fmt::format("{}: stream {}", where_, h.stream_id), "",
        fmt::format("its messages from seq {} (where it stands here)", *floor),
        fmt::format("a sender that keeps them only from seq {}: {} message(s) lost (seq {}..{})", h.seq,
                    h.seq - *floor, *floor, h.seq - 1)));
    logger().error("{}", lost_.back());
    streams_[h.stream_id] = h.seq;
  }
  p.placed = true;
  if (h.kind == wire::Kind::EndOfStream) p.ended = true;
  // What it weighs for credit is what its frames would hold: the data a
  // reference (to shared memory or a device's) names counts as the sender
  // counts it, in place of the reference.
  if (m.shared)
    for (size_t i = 0; i < m.tensors.size(); ++i)
      bytes += static_cast<uint64_t>(m.tensors[i].spec().bytes()) -
               frames[wire::first_tensor_frame(h.kind) + 1 + 2 * i].bytes.size();
  take(p, bytes);
  p.taken_unacked += bytes;
  m.peer = session;
  if (m.shared) lease(p, m);
  ready_.push_back(std::move(m));
}

bool ReliableReceiver::takes_shared(const wire::Message& heartbeat) const {
  if (!options_.shared_memory || !heartbeat.probe) return false;
  const uint64_t session = heartbeat.control.session;
  try {
    if (heartbeat.probe->bytes < sizeof session)
      throw WireError(error_message("probe", "bytes", sizeof session, heartbeat.probe->bytes));
    const std::shared_ptr<void> probe = map_shared(*heartbeat.probe);
    uint64_t found = 0;
    std::memcpy(&found, probe.get(), sizeof found);
    if (found != session)
      throw WireError(error_message("probe", "session", fmt::format("{:016x}", session), fmt::format("{:016x}", found)));
    logger().debug("{}: sender {:016x} shares its memory", where_, session);
    return true;
  } catch (const Error& e) {
    logger().info("{}: sender {:016x} offers shared memory this process cannot map; it sends copies: {}", where_,
                  session, e.what());
    return false;
  }
}

void ReliableReceiver::lease(Peer& p, wire::Message& m) {
  ++shared_;
  // A small tensor is copied out of the sender's memory at once: viewed,
  // it would hold the message's lease, and with it the sender's memory of
  // every tensor of the message, for as long as it lives. A stage that
  // passes a chunk's labels on keeps them long after the chunk's signal.
  std::vector<Tensor*> lent;
  uint64_t bytes = 0;
  for (Tensor& t : m.tensors) {
    const auto size = static_cast<uint64_t>(t.spec().bytes());
    if (t.device().host_memory() && size < options_.pack_below) {
      t = tensor_from_bytes(t.spec(), t.host_data());
      continue;
    }
    lent.push_back(&t);
    bytes += size;
  }
  if (lent.empty()) return;  // nothing held: the sender's memory is free once the message is acknowledged
  const uint64_t max_leases = std::min<uint64_t>(wire::kMaxLeases, std::max<uint64_t>(1, options_.credit_messages / 2));
  if (p.leased.size() >= max_leases || (!p.leased.empty() && p.leased_bytes + bytes > options_.credit_bytes / 2)) {
    // An owner that keeps what it receives would have the sender keep as
    // much: past half the credit, copies, and the sender's memory is free.
    ++copied_;
    for (Tensor* t : lent) {
      if (t->device().host_memory()) {
        *t = tensor_from_bytes(t->spec(), t->host_data());
        continue;
      }
      Tensor copy = t->to(t->device());
      copy.buffer()->wait();  // read before the sender's memory goes back to it
      *t = std::move(copy);
    }
    return;
  }
  struct Held {
    std::shared_ptr<void> mapping, lease;
  };
  const uint64_t session = m.peer, seq = m.header.seq;
  std::weak_ptr<AckQueue> queue = acks_;
  const std::shared_ptr<void> lease(nullptr, [queue, session, seq](void*) {
    if (auto q = queue.lock()) q->push(session, seq, AckQueue::What::Release);
  });
  p.leased.emplace(seq, bytes);
  p.leased_bytes += bytes;
  for (Tensor* t : lent) {
    Buffer& b = *t->buffer();  // decode made it: no one else holds it yet
    b.memory = std::shared_ptr<void>(std::make_shared<Held>(Held{std::move(b.memory), lease}), b.data);
  }
}

bool ReliableReceiver::read_rings(Clock::time_point now) {
  const size_t before = ready_.size();
  for (auto& [session, p] : peers_)
    if (p.ring) read_ring(session, p, now, kRingReadsPerRecv);
  return ready_.size() != before;
}

void ReliableReceiver::read_ring(uint64_t session, Peer& p, Clock::time_point now, size_t most) {
  if (reading_ring_) return;
  reading_ring_ = true;
  // Cleared however it returns: an error thrown from here must not stop
  // every later read of the rings.
  struct Done {
    bool& reading;
    ~Done() { reading = false; }
  } done{reading_ring_};
  try {
    // The sender's credit bounds what the ring holds.
    const wire::MapShared map = [&p](const SharedHandle& h) { return p.mappings.map(h); };
    for (size_t read = 0; read < most; ++read) {
      std::optional<RingReader::Entry> e = p.ring->next(map);
      if (!e) break;
      ++ringed_;
      accept_one(session, e->frames(), e->bytes, now);
    }
    p.ring->release();
    if (p.ring->writer_waits()) send_control(p, wire::Kind::Credit, now);
  } catch (const WireError& e) {
    // Its sender goes back to the socket when the next record names no
    // ring, and sends again from where this receiver stands.
    reject(e.what());
    p.ring.reset();
    p.ring_failed = true;
    send_control(p, wire::Kind::Credit, now);
  }
}

bool ReliableReceiver::any_ring() const {
  for (const auto& [session, p] : peers_)
    if (p.ring) return true;
  return false;
}

bool ReliableReceiver::sleep_on_rings() {
  for (auto& [session, p] : peers_)
    if (p.ring && !p.ring->sleep()) {
      wake_rings();
      return false;
    }
  return true;
}

void ReliableReceiver::wake_rings() {
  for (auto& [session, p] : peers_)
    if (p.ring) p.ring->wake();
}

std::optional<wire::Message> ReliableReceiver::hand_on() {
  // Moved once, straight into what recv returns.
  std::optional<wire::Message> m(std::in_place, std::move(ready_.front()));
  ready_.pop_front();
  if (options_.acknowledge == Acknowledge::OnNextRecv) handed_ = {m->peer, m->header.seq};
  return m;
}

std::optional<wire::Message> ReliableReceiver::recv(std::chrono::milliseconds timeout) {
  throw_losses();
  take_acks(/*flush_all=*/false);
  if (!ready_.empty()) return hand_on();
  const auto max_frames = static_cast<size_t>(options_.max_message_bytes / 32 + 2);
  std::optional<Clock::time_point> deadline, quiet_since;
  bool spins = false;  // this dry spell
  Incoming in;
  // A message after running dry: how long it was waited for says whether
  // the next wait spins.
  auto arrived = [&](Clock::time_point now) {
    if (quiet_since) spin_pays_ = now - *quiet_since <= kSpinPaysWithin * options_.ring_spin;
    return hand_on();
  };
  for (;;) {
    // One clock read for what the rings hold, the moment they were read.
    if (const Clock::time_point read_at = Clock::now(); read_rings(read_at)) {
      throw_losses();
      if (!ready_.empty()) return arrived(read_at);
    }
    bool got = false;
    try {
      got = read_multipart(socket_, in, options_.max_message_bytes, max_frames);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      throw WireError(error_message(where_, fmt::format("receive failed: {}", e.what()), "", ""));
    }
    const Clock::time_point now = Clock::now();
    if (got) {
      // A loss found on a message taken is said first; the message, the
      // owner's already, comes with the next recv.
      accept(in, now);
      throw_losses();
      if (ready_.empty()) continue;
      return arrived(now);
    }
    // Nothing to read. A sender writing into a ring is likely to write
    // again within microseconds: looked for a while before anything else.
    if (!quiet_since) {
      quiet_since = now;
      spins = spin_pays_ || ++dry_spells_ % kSpinProbe == 0;
    }
    const Clock::duration spin = timeout.count() < 0 ? Clock::duration(options_.ring_spin)
                                                     : std::min<Clock::duration>(options_.ring_spin, timeout);
    if (spins && now - *quiet_since < spin && any_ring()) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
      continue;
    }
    // What was done with is acknowledged once the socket has stayed quiet
    // for kAckDelay: a receiver that keeps up with its sender runs dry
    // after every message, and an acknowledgement each time (and the
    // sender's heartbeat answering it) would triple the messages on the wire.
    const bool quiet = now - *quiet_since >= kAckDelay;
    take_acks(/*flush_all=*/quiet);
    beat(now);
    throw_losses();
    auto wait = quiet ? options_.heartbeat_interval : std::chrono::duration_cast<std::chrono::milliseconds>(kAckDelay);
    if (timeout.count() >= 0) {
      if (!deadline) deadline = now + timeout;
      if (now >= *deadline) return std::nullopt;
      wait = std::min(wait, ms(*deadline - now) + std::chrono::milliseconds(1));
    }
    // Asleep, a sender that writes into a ring rings the doorbell (or the socket's).
    if (!sleep_on_rings()) continue;
    wait_readable(socket_, acks_->wake_fd, wait, doorbell_ ? doorbell_->read_fd() : -1);
    if (doorbell_) doorbell_->drain();
    wake_rings();
    take_acks(/*flush_all=*/false);
  }
}

}  // namespace sluice::channel_detail
