// The sending end of the reliable protocol (io/WIRE_FORMAT.md, "Reliable
// mode"). A message is sent on the caller's thread when credit allows, so
// it costs no hand-off; the pacemaker does the rest while the caller is away.

#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <sluice/base/detail/log.h>
#include <sluice/io/detail/channel_impl.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice::channel_detail {
namespace {

// A receiver's messages are small and fixed: this bounds what one may claim.
constexpr int64_t kControlLimit = 4096;
constexpr size_t kControlFrames = 4;

// A receiver sends no shared-memory references: any is refused.
const wire::MapShared& no_references() {
  static const wire::MapShared none = refuse_shared("shared-memory references from a receiver");
  return none;
}

std::chrono::milliseconds ms(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

uint64_t bytes_of(const std::vector<wire::Frame>& frames) {
  uint64_t n = 0;
  for (const wire::Frame& f : frames) n += f.size;
  return n;
}

uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace

ReliableSender::ReliableSender(zmq::socket_t& socket, const ChannelOptions& options, const std::string& where,
                               HandshakeWatch* handshakes)
    : socket_(socket),
      options_(options),
      where_(where),
      handshakes_(handshakes),
      encode_{.crc = options.crc, .pack_below = options.pack_below},
      session_(new_session()),
      next_seq_(options.first_seq),
      opened_(Clock::now()),
      last_heard_(opened_),
      last_sent_(opened_ - options.heartbeat_interval) {
  if (options.shared_memory) {
    try {
      probe_ = shared_allocate(sizeof session_);
      std::memcpy(probe_.get(), &session_, sizeof session_);
      probe_handle_ = find_shared(probe_.get(), sizeof session_);
    } catch (const Error& e) {
      logger().info("{}: no shared memory offered to receivers: {}", where_, e.what());
      probe_.reset();
    }
  }
  // Last: its first hello offers the probe, and a receiver decides on the
  // first heartbeat it gets whether it takes references.
  pacemaker_ = std::thread([this] { pace(); });
}

ReliableSender::~ReliableSender() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  pacemaker_.join();
  // Everything acknowledged: a last beat says so. A receiver closing after
  // this sender asks it to confirm its last acknowledgements, and would
  // otherwise wait its whole linger time for a sender that is gone.
  try {
    std::lock_guard lock(mutex_);
    if (receiver_ != 0 && unacked_.empty()) send_heartbeat(Clock::now());
  } catch (const std::exception& e) { logger().debug("{}: last heartbeat not sent: {}", where_, e.what()); }
  for (const auto& [session, pidfd] : receiver_processes_) ::close(pidfd);
}

void ReliableSender::watch_receiver(uint64_t session, uint64_t pid) {
  if (pid == 0 || pid > static_cast<uint64_t>(std::numeric_limits<pid_t>::max()) ||
      receiver_processes_.contains(session))
    return;
  // Opened while the receiver is alive (it has just sent this record), so
  // the pidfd is that process's even if its pid is later reused.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (pidfd < 0) {
    logger().debug(
        "{}: cannot watch receiver process {} ({}): what it is lent stays until this sender closes", where_,
        pid, std::strerror(errno));
    return;
  }
  receiver_processes_.emplace(session, pidfd);
}

void ReliableSender::reclaim_from_gone_receivers(Clock::time_point now) {
  last_reclaimed_ = now;
  for (auto it = receiver_processes_.begin(); it != receiver_processes_.end();) {
    const auto [session, pidfd] = *it;
    pollfd exited{pidfd, POLLIN, 0};
    if (session == receiver_ || ::poll(&exited, 1, 0) != 1) {
      ++it;
      continue;
    }
    size_t freed = 0;
    for (auto lent = lent_.begin(); lent != lent_.end();) {
      const bool theirs = lent->first.second == session;
      freed += theirs;
      lent = theirs ? lent_.erase(lent) : std::next(lent);
    }
    if (freed > 0)
      logger().debug("{}: receiver {:016x} is gone: the memory of {} message(s) lent to it is free", where_,
                     session, freed);
    ::close(pidfd);
    it = receiver_processes_.erase(it);
  }
}

void ReliableSender::pace() {
  // A batch is due tens of microseconds after its first message: the
  // default timer slack (50 us) would double that.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  std::unique_lock lock(mutex_);
  bool logged = false;
  Clock::time_point serviced = Clock::now();
  while (!stopping_) {
    // Often while there is something to deliver or a receiver to meet;
    // otherwise twice a heartbeat interval; and when a batch is due.
    const bool busy = receiver_ == 0 || !unacked_.empty();
    const Clock::time_point tick =
        serviced + (busy ? std::chrono::milliseconds(5) : options_.heartbeat_interval / 2);
    std::optional<Clock::time_point> due = batch_due();
    pacer_wakes_ = due ? std::min(tick, *due) : tick;
    stop_cv_.wait_until(lock, pacer_wakes_);
    pacer_wakes_ = Clock::time_point::min();
    if (stopping_) return;
    // Woken early by send for a batch due sooner, or for one that a send
    // has sent meanwhile: wait again.
    const Clock::time_point now = Clock::now();
    due = batch_due();
    if (now < tick && !(due && *due <= now)) continue;
    try {
      service(std::chrono::milliseconds(0));
      logged = false;
    } catch (const std::exception& e) {
      // The caller's next send or flush meets the same error.
      if (!logged) logger().warn("{}: {}", where_, e.what());
      logged = true;
    }
    serviced = Clock::now();
  }
}

std::vector<Refusal> ReliableSender::refusals() const {
  std::lock_guard lock(mutex_);
  return {refusals_.begin(), refusals_.end()};
}

void ReliableSender::publish() {
  // Relaxed: each counter is read alone, and a sequentially consistent
  // store costs a fence per counter per message.
  constexpr auto relaxed = std::memory_order_relaxed;
  published_.unacknowledged.store(unacked_.size(), relaxed);
  published_.resent.store(resent_, relaxed);
  published_.peers_lost.store(peers_lost_, relaxed);
  published_.rejected.store(rejected_, relaxed);
  published_.refusals.store(refusals_received_, relaxed);
  published_.shared.store(shared_, relaxed);
  published_.coalesced.store(coalesced_, relaxed);
  published_.ringed.store(ringed_, relaxed);
  published_.records_ringed.store(records_ringed_, relaxed);
  // The room room_for() sees, in messages.
  const uint64_t finished = receiver_ == 0 ? 0 : grant_.credit_messages - base_messages_;
  const uint64_t room = saturating_add(options_.credit_messages, finished);
  published_.credit.store(room > unacked_.size() ? room - unacked_.size() : 0, relaxed);
}

bool ReliableSender::alive(Clock::time_point now) const {
  return heard_ && now - last_heard_ <= options_.heartbeat_interval * options_.missed_heartbeats;
}

// Room to keep one more message: the sender's own credit options bound
// what it keeps (sent or waiting for the receiver's credit), so that send
// returns at once until then, receiver or not. What its receiver grants
// above its own credit is for messages the receiver has finished and not
// committed (Acknowledge::Checkpoint): kept here until a checkpoint commits
// them, they do not take this sender's room, or one that commits every
// few hundred messages would stall it.
bool ReliableSender::room_for(uint64_t bytes) const {
  if (unacked_.empty()) return true;  // one message larger than the byte credit goes alone
  const uint64_t finished_messages = receiver_ == 0 ? 0 : grant_.credit_messages - base_messages_;
  const uint64_t finished_bytes = receiver_ == 0 ? 0 : grant_.credit_bytes - base_bytes_;
  return unacked_.size() < saturating_add(options_.credit_messages, finished_messages) &&
         unacked_bytes_ + bytes <= saturating_add(options_.credit_bytes, finished_bytes);
}

void ReliableSender::check_receiver(Clock::time_point now, size_t waiting) const {
  if (alive(now)) return;
  // A receiver that refused this sender at the handshake (its key, or its
  // lack of one) will not take it: said at once, not as a silence later.
  const bool refused = !heard_ && handshakes_ && handshakes_->failed() > 0;
  // Dead since the last beat it missed; absent since the channel opened.
  const Clock::time_point since =
      heard_ ? last_heard_ + options_.heartbeat_interval * options_.missed_heartbeats : opened_;
  if (!refused && now - since < options_.peer_timeout) return;
  const size_t lost = unacked_.size() + waiting;
  std::string range =
      unacked_.empty() ? std::string()
                       : fmt::format(" (seq {} to {})", unacked_.front().seq, unacked_.back().seq + waiting);
  if (refused)
    throw WireError(error_message(
        where_,
        fmt::format("the receiver {} at the handshake, {} time(s): {} message(s) not delivered{}",
                    handshakes_->last_reason(), handshakes_->failed(), lost, range),
        "", ""));
  throw WireError(
      error_message(where_,
                    fmt::format("{} for {} ms (peer_timeout {} ms): {} message(s) not delivered{}",
                                heard_ ? "the receiver went silent" : "no receiver answered",
                                ms(now - since).count(), options_.peer_timeout.count(), lost, range),
                    "", ""));
}

bool ReliableSender::send(wire::Message&& m, std::chrono::milliseconds timeout) {
  if (!stream_id_) stream_id_ = m.header.stream_id;
  if (m.header.stream_id != *stream_id_)
    throw WireError(error_message(where_, "stream id",
                                  fmt::format("{} (a reliable channel carries one stream)", *stream_id_),
                                  m.header.stream_id));
  if (wire::is_control(m.header.kind))
    throw WireError(error_message(fmt::format("{}: send", where_), "kind",
                                  "no control message (the channel sends its control messages itself)",
                                  wire::kind_name(m.header.kind)));
  std::unique_lock lock(mutex_);
  m.header.seq = next_seq_;
  // In frames of its own first (cheap: they lend the tensors' memory), which
  // also says what it weighs; a receiver that shares memory is sent
  // references instead, made when it goes (frames_for_receiver). A message
  // that travels packed is weighed without its frame, made only if it
  // goes through the socket: into a ring, it is written straight. One with
  // a device's tensors is weighed without its frames, which would copy
  // them to the host: a receiver that opens the device is sent references.
  uint64_t bytes = wire::packed_bytes(m, encode_);
  const bool packed = bytes > 0;
  std::vector<wire::Frame> frames;
  if (!packed && wire::holds_device_tensors(m)) {
    bytes = wire::unpacked_bytes(m);
  } else if (!packed) {
    frames = wire::encode(m, encode_);
    bytes = bytes_of(frames);
  }
  if (static_cast<int64_t>(bytes) > options_.max_message_bytes)
    throw WireError(error_message(
        fmt::format("{}: seq {}", where_, next_seq_), "message size",
        fmt::format("at most {} bytes (max_message_bytes)", options_.max_message_bytes), bytes));
  // The deadline is reckoned only when it waits: the clock is read once
  // a message otherwise.
  std::optional<Clock::time_point> deadline;
  Clock::time_point now;
  for (bool first = true;; first = false) {
    now = Clock::now();
    if (!first || receiver_ == 0 || !room_for(bytes) || now - last_serviced_ >= kServiceInterval) {
      service(std::chrono::milliseconds(0));
      now = Clock::now();
    }
    if (receiver_ != 0 && static_cast<int64_t>(bytes) > static_cast<int64_t>(grant_.max_message_bytes))
      throw WireError(error_message(
          fmt::format("{}: seq {}", where_, next_seq_), "message size",
          fmt::format("at most {} bytes (the receiver's max_message_bytes)", grant_.max_message_bytes),
          bytes));
    if (room_for(bytes)) break;
    check_receiver(now, 1);
    if (!deadline) deadline = timeout.count() < 0 ? Clock::time_point::max() : now + timeout;
    if (now >= *deadline) return false;
    service(std::min(options_.heartbeat_interval, ms(*deadline - now) + std::chrono::milliseconds(1)));
  }
  swap_in_spare_list(m.tensors);
  unacked_.emplace_back_from([&] {
    return Kept{.seq = next_seq_++,
                .message = std::move(m),
                .frames = std::move(frames),
                .bytes = bytes,
                .packed = packed,
                .queued = now};
  });
  unacked_bytes_ += bytes;
  transmit(now);
  // A batch left waiting goes when due, by the pacemaker if no send comes first.
  if (const std::optional<Clock::time_point> due = batch_due(); due && *due < pacer_wakes_)
    stop_cv_.notify_one();
  publish();
  return true;
}

void ReliableSender::swap_in_spare_list(std::vector<Tensor>& tensors) {
  if (spare_lists_.empty() || tensors.empty()) return;
  std::vector<Tensor> callers = std::move(spare_lists_.back());
  spare_lists_.pop_back();
  callers.assign(std::make_move_iterator(tensors.begin()), std::make_move_iterator(tensors.end()));
  tensors.swap(callers);
}  // the caller's list, emptied, goes here

void ReliableSender::give_back_list(std::vector<Tensor>& tensors) {
  // As many as the credit lets wait, each a few tensors long: no more
  // memory than the messages held.
  constexpr size_t kMostTensors = 8;
  if (tensors.capacity() == 0 || tensors.capacity() > kMostTensors ||
      spare_lists_.size() >= options_.credit_messages)
    return;
  tensors.clear();
  spare_lists_.push_back(std::move(tensors));
}

void ReliableSender::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    service(std::chrono::milliseconds(0), /*flush_batch=*/true);
    if (unacked_.empty()) return;
    const Clock::time_point now = Clock::now();
    check_receiver(now, 0);
    if (now >= deadline)
      throw WireError(error_message(
          where_,
          fmt::format("flush: {} message(s) not acknowledged within {} ms (seq {} to {})", unacked_.size(),
                      timeout.count(), unacked_.front().seq, unacked_.back().seq),
          "", ""));
    service(std::min(options_.heartbeat_interval, ms(deadline - now) + std::chrono::milliseconds(1)),
            /*flush_batch=*/true);
  }
}

void ReliableSender::service(std::chrono::milliseconds wait, bool flush_batch) {
  // Whichever way it returns, what it read shows in the counters.
  struct Publish {
    ReliableSender& sender;
    ~Publish() { sender.publish(); }
  } publish_on_return{*this};
  last_serviced_ = Clock::now();
  Incoming in;
  bool read_any = false;
  for (;;) {
    // The receiver's records in its ring first: while a ring is in use,
    // they come there (on the socket only those that found the lane full).
    if (ring_ && take_ring_record(Clock::now())) {
      read_any = true;
      continue;
    }
    bool got = false;
    try {
      got = read_multipart(socket_, in, kControlLimit, kControlFrames);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      throw WireError(error_message(where_, fmt::format("receive failed: {}", e.what()), "", ""));
    }
    const Clock::time_point now = Clock::now();
    if (got) {
      read_any = true;
      // A doorbell (one empty frame): the receiver wrote a record into the
      // ring while this side slept, which the loop takes next.
      if (in.frames == 1 && in.total == 0) continue;
      try {
        take_from_receiver(decode_incoming(in, 0, kControlLimit, kControlFrames, where_, no_references()),
                           now);
      } catch (const WireError& e) {
        ++rejected_;
        logger().warn("{} (message skipped)", e.what());
      }
      continue;
    }
    if (now - last_sent_ >= options_.heartbeat_interval) send_heartbeat(now);
    transmit(now, flush_batch);
    if (!receiver_processes_.empty() && now - last_reclaimed_ >= options_.heartbeat_interval)
      reclaim_from_gone_receivers(now);
    if (heard_ && !alive(now) && !declared_dead_) {
      declared_dead_ = true;
      ++peers_lost_;
      logger().warn("{}: the receiver has been silent for {} ms; keeping {} unacknowledged message(s) for it",
                    where_, ms(now - last_heard_).count(), unacked_.size());
    }
    if (read_any || wait.count() <= 0) return;
    // A hello that found no connection yet is tried again soon, not a
    // heartbeat interval later.
    if (receiver_ == 0 || now - last_sent_ >= options_.heartbeat_interval)
      wait = std::min(wait, std::chrono::milliseconds(5));
    // Asleep on the socket: a receiver that writes a record into the ring
    // meanwhile rings the socket's doorbell.
    if (ring_ && !ring_->sleep()) continue;
    RingWriter* asleep = ring_.get();
    wait_readable(socket_, -1, wait);
    if (asleep) asleep->wake();
    wait = std::chrono::milliseconds(0);  // read what woke us, then return
  }
}

void ReliableSender::take_from_receiver(const wire::Message& m, Clock::time_point now) {
  if (m.header.kind == wire::Kind::Error) {
    record_refusal(m);
    return;
  }
  if (!wire::is_control(m.header.kind))
    throw WireError(error_message(where_, fmt::format("kind {}", wire::kind_name(m.header.kind)),
                                  "credit, ack, heartbeat or error (a refusal) from a receiver", ""));
  handle(m, now);
}

bool ReliableSender::take_ring_record(Clock::time_point now) {
  std::optional<RingEntry> e;
  try {
    e = ring_->next_record();
  } catch (const WireError& error) {
    drop_ring(error.what());
    return false;
  }
  if (!e) return false;
  ++records_ringed_;
  try {
    if (e->frames().size() > kControlFrames)
      throw WireError(error_message(where_, "a record in the ring",
                                    fmt::format("at most {} frames", kControlFrames), e->frames().size()));
    take_from_receiver(
        wire::decode(e->frames(), {.max_message_bytes = kControlLimit}, where_, no_references()), now);
  } catch (const WireError& error) {
    ++rejected_;
    logger().warn("{} (message skipped)", error.what());
  }
  return true;
}

void ReliableSender::handle(const wire::Message& m, Clock::time_point now) {
  const wire::Control& c = m.control;
  // Every message of a receiver carries its whole record.
  if (c.session == 0 || c.credit_messages == 0 || c.credit_bytes == 0)
    throw WireError(
        error_message(where_, fmt::format("kind {}", wire::kind_name(m.header.kind)),
                      "a receiver's record (a session and credit)",
                      fmt::format("session {}, credit {} messages", c.session, c.credit_messages)));
  last_heard_ = now;
  heard_ = true;
  share_ = probe_ && m.shared;
  if (!share_)
    receiver_devices_.clear();
  else if (m.devices != receiver_devices_)
    receiver_devices_ = m.devices;
  batches_ = (m.header.flags & wire::kFlagTakesBatches) != 0;
  gathered_ = {};
  if (share_) watch_receiver(c.session, m.pid);
  if (declared_dead_) {
    declared_dead_ = false;
    logger().info("{}: the receiver is back", where_);
  }
  if (c.session != receiver_) {
    // A receiver new to this sender (the first, or one that restarted):
    // everything unacknowledged goes to it again, after a heartbeat saying
    // where the stream stands.
    if (receiver_ != 0) logger().info("{}: a new receiver; sending {} message(s) again", where_, unacked_.size());
    // What went to the one before as references it may still view, alive
    // with its channel closed: kept from reuse for good.
    for (size_t i = 0; i < sent_; ++i)
      if (unacked_[i].shared) lent_.emplace(std::pair{unacked_[i].seq, receiver_}, unacked_[i].frames);
    resent_ += sent_;
    receiver_ = c.session;
    rewind_seen_ = c.rewind;
    sent_ = 0;
    sent_bytes_ = 0;
    base_messages_ = c.credit_messages;
    base_bytes_ = c.credit_bytes;
    send_heartbeat(now);
    // A receiver that restarted: the one before may be gone already.
    reclaim_from_gone_receivers(now);
  } else if (c.rewind > rewind_seen_) {
    // The receiver missed a message: go back to the one it expects.
    rewind_seen_ = c.rewind;
    if (c.next >= oldest()) {
      rewind_to(c.next);
    } else {
      send_heartbeat(now);  // it asks for what was acknowledged before: say where the stream starts now
    }
  }
  use_ring(m);
  grant_ = c;
  base_messages_ = std::min(base_messages_, c.credit_messages);
  base_bytes_ = std::min(base_bytes_, c.credit_bytes);
  // The acknowledgement: everything below header.seq is done with.
  while (!unacked_.empty() && unacked_.front().seq < m.header.seq) {
    Kept& k = unacked_.front();
    unacked_bytes_ -= k.bytes;
    if (sent_ > 0) {
      --sent_;
      sent_bytes_ -= k.bytes;
    }
    if (k.shared) lent_.emplace(std::pair{k.seq, c.session}, std::move(k.frames));
    give_back_list(k.message.tensors);
    unacked_.pop_front();
  }
  // What this receiver lent and no longer lists: its tensors are gone.
  for (auto it = lent_.begin(); it != lent_.end() && it->first.first < m.header.seq;) {
    const auto [seq, receiver] = it->first;
    const bool listed = std::binary_search(m.leases.begin(), m.leases.end(), seq);
    it = receiver == c.session && !listed ? lent_.erase(it) : std::next(it);
  }
  // A receiver closing waits for a heartbeat saying that this arrived.
  if (m.header.flags & wire::kFlagConfirm) send_heartbeat(now);
}

void ReliableSender::rewind_to(uint64_t next) {
  const size_t from = static_cast<size_t>(std::min<uint64_t>(next > oldest() ? next - oldest() : 0, sent_));
  resent_ += sent_ - from;
  for (; sent_ > from; --sent_) sent_bytes_ -= unacked_[sent_ - 1].bytes;
}

void ReliableSender::use_ring(const wire::Message& record) {
  const std::optional<SharedHandle> offered = share_ ? record.ring : std::nullopt;
  if (offered && ring_ && ring_->id() == offered->segment) return;
  if (!offered || offered->segment == ring_refused_) {
    if (ring_) rewind_to(record.control.next);
    ring_.reset();
    return;
  }
  try {
    ring_ = std::make_unique<RingWriter>(*offered, record.control.session, record.pid, where_);
  } catch (const Error& e) {
    ring_refused_ = offered->segment;
    ring_.reset();
    logger().info("{}: the receiver's ring cannot be used; messages take the socket: {}", where_, e.what());
  }
  rewind_to(record.control.next);
}

void ReliableSender::drop_ring(const std::string& why) {
  logger().warn("{}: {}; messages take the socket", where_, why);
  ring_refused_ = ring_->id();
  ring_.reset();
  rewind_to(oldest());
}

void ReliableSender::record_refusal(const wire::Message& m) {
  const uint64_t seq = m.header.seq;
  // A seq this session never sent: stale (meant for a session before) or
  // a receiver's mistake. Nothing of this stream to record.
  if (seq < options_.first_seq || seq >= next_seq_) {
    logger().debug("{}: a refusal of seq {}, which this sender did not send, ignored: {}", where_, seq, m.error);
    return;
  }
  // The same message refused again: sent again to a receiver that restarted.
  if (std::any_of(refusals_.begin(), refusals_.end(), [seq](const Refusal& r) { return r.seq == seq; })) return;
  if (refusals_.size() == kMaxRefusalsKept) refusals_.pop_front();
  refusals_.push_back({seq, m.error});
  ++refusals_received_;
  logger().info("{}: the receiver refused seq {}: {}", where_, seq, m.error);
}

bool ReliableSender::credit_allows(size_t i, uint64_t bytes_before) const {
  return i < unacked_.size() && i < grant_.credit_messages &&
         (i == 0 || bytes_before + unacked_[i].bytes <= grant_.credit_bytes);
}

void ReliableSender::check_size(size_t i) const {
  if (unacked_[i].bytes > grant_.max_message_bytes)
    throw WireError(error_message(
        fmt::format("{}: seq {}", where_, unacked_[i].seq), "message size",
        fmt::format("at most {} bytes (the receiver's max_message_bytes)", grant_.max_message_bytes),
        unacked_[i].bytes));
}

bool ReliableSender::write_into_ring(Kept& k) {
  if (k.packed && ring_->fits_inline(k.bytes)) {
    uint8_t* at = ring_->write_frame(k.bytes);
    if (at) wire::write_packed(k.message, encode_, at);
    return at != nullptr;
  }
  return ring_->write(frames_for_receiver(k), k.outside);
}

void ReliableSender::transmit_through_ring(Clock::time_point now) {
  bool wrote = false;
  try {
    while (credit_allows(sent_, sent_bytes_)) {
      check_size(sent_);
      Kept& k = unacked_[sent_];
      if (!write_into_ring(k)) break;
      wrote = true;
      sent_bytes_ += k.bytes;
      if (k.shared) ++shared_;
      ++ringed_;
      ++sent_;
      last_sent_ = last_data_sent_ = now;
    }
  } catch (const Error& e) {
    // A receiver whose ring makes no sense, or no shared memory left for a
    // large message: back to the socket.
    drop_ring(e.what());
    return;
  }
  // The receiver sleeps: its doorbell wakes it, or else an empty frame on its socket.
  if (wrote && ring_->publish() && !ring_->ring_doorbell()) {
    try {
      write_frames(socket_, {wire::Frame{}}, nullptr, /*dont_wait=*/true);
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR)
        throw WireError(error_message(where_, fmt::format("doorbell failed: {}", e.what()), "", ""));
    }
  }
}

void ReliableSender::transmit(Clock::time_point now, bool flush_batch) {
  if (receiver_ == 0 || !alive(now)) return;
  if (ring_) return transmit_through_ring(now);
  while (credit_allows(sent_, sent_bytes_)) {
    check_size(sent_);
    // The batch from sent_: the one-frame messages that follow, within the
    // credit and coalesce_bytes.
    size_t end = sent_;
    uint64_t bytes = sent_bytes_;
    size_t batch_bytes = wire::kHeaderBytes;
    if (gathered_.first_seq == unacked_[sent_].seq) {
      end += gathered_.count;
      bytes += gathered_.credit_bytes;
      batch_bytes = gathered_.frame_bytes;
    }
    const uint64_t most = std::min<uint64_t>(options_.coalesce_bytes, grant_.max_message_bytes);
    while (credit_allows(end, bytes) && batchable(unacked_[end])) {
      const size_t entry = wire::batch_entry_bytes(one_frame_bytes(unacked_[end]));
      if (batch_bytes + entry > most) break;
      batch_bytes += entry;
      bytes += unacked_[end].bytes;
      ++end;
    }
    if (end > sent_) {
      // It waits for company while more may come: not when something stops
      // it short (a message that cannot join, the credit, coalesce_bytes),
      // nor once its first message has waited coalesce_delay, nor when the
      // channel sent nothing for that long (a lone message goes at once).
      const bool due = flush_batch || end < unacked_.size() ||
                       now - unacked_[sent_].queued >= options_.coalesce_delay ||
                       now - last_data_sent_ >= options_.coalesce_delay;
      if (!due) {
        gathered_ = {unacked_[sent_].seq, end - sent_, bytes - sent_bytes_, batch_bytes};
        return;
      }
    } else {
      end = sent_ + 1;
    }
    try {
      bool written = false;
      Kept& k = unacked_[sent_];
      if (end == sent_ + 1 && k.packed && k.frames.empty()) {
        // Alone and packed: written straight into its frame, as into a batch.
        zmq::message_t frame(k.bytes);
        write_one_frame(k, static_cast<uint8_t*>(frame.data()));
        written = socket_.send(frame, zmq::send_flags::dontwait).has_value();
      } else if (end == sent_ + 1) {
        written = write_frames(socket_, frames_for_receiver(k), nullptr, /*dont_wait=*/true);
      } else {
        std::vector<size_t> sizes;
        sizes.reserve(end - sent_);
        for (size_t i = sent_; i < end; ++i) sizes.push_back(one_frame_bytes(unacked_[i]));
        const size_t first = sent_;
        written = write_batch(
            socket_, *stream_id_, unacked_[sent_].seq, sizes,
            [&](size_t i, uint8_t* out) { write_one_frame(unacked_[first + i], out); }, /*dont_wait=*/true);
        if (written) coalesced_ += end - sent_;
      }
      gathered_ = {};
      if (!written) return;
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) return;
      throw WireError(error_message(
          where_, fmt::format("send of seq {} failed: {}", unacked_[sent_].seq, e.what()), "", ""));
    }
    for (; sent_ < end; ++sent_) {
      sent_bytes_ += unacked_[sent_].bytes;
      if (unacked_[sent_].shared) ++shared_;
    }
    last_sent_ = last_data_sent_ = now;
  }
}

bool ReliableSender::batchable(Kept& k) {
  if (!batches_ || options_.coalesce_delay.count() <= 0) return false;
  const uint64_t bytes = one_frame_bytes(k);
  return bytes > 0 && wire::kHeaderBytes + wire::batch_entry_bytes(bytes) <= options_.coalesce_bytes;
}

uint64_t ReliableSender::one_frame_bytes(Kept& k) {
  // Packed, it is one frame of k.bytes, and never shared (below pack_below).
  if (k.packed && k.frames.empty()) return k.bytes;
  const std::vector<wire::Frame>& frames = frames_for_receiver(k);
  return frames.size() == 1 ? frames[0].size : 0;
}

void ReliableSender::write_one_frame(const Kept& k, uint8_t* out) const {
  if (k.frames.empty()) {
    wire::write_packed(k.message, encode_, out);
  } else if (k.frames[0].size > 0) {
    std::memcpy(out, k.frames[0].data, k.frames[0].size);
  }
}

std::optional<Clock::time_point> ReliableSender::batch_due() const {
  if (!batches_ || ring_ || receiver_ == 0 || sent_ >= unacked_.size()) return std::nullopt;
  return unacked_[sent_].queued + options_.coalesce_delay;
}

const std::vector<wire::Frame>& ReliableSender::frames_for_receiver(Kept& k) {
  // A message small enough to travel packed travels packed: for a few
  // bytes one frame costs less than a slot of shared memory and its lease.
  const bool share = share_ && wire::carries_tensors(k.message.header.kind) && k.bytes >= encode_.pack_below;
  // No frames yet: a packed message that went straight into a ring, or not yet anywhere.
  // A device's tensors go as device references to a receiver that opens
  // them: encoded again when the devices it names change.
  static const std::vector<IpcDeviceId> kNoDevices;
  const std::vector<IpcDeviceId>& devices = share ? receiver_devices_ : kNoDevices;
  if (share != k.shared || k.frames.empty() || devices != k.devices) {
    wire::EncodeOptions options = encode_;
    options.shared = share;
    options.devices = devices;
    k.frames = wire::encode(k.message, options);
    k.shared = share;
    k.devices = devices;
    k.outside.reset();
  }
  return k.frames;
}

void ReliableSender::send_heartbeat(Clock::time_point now) {
  wire::Message hb;
  hb.header = {wire::Kind::Heartbeat, 0, stream_id_.value_or(0), oldest(), 0, 0};
  hb.control.session = session_;
  hb.control.next = oldest() + sent_;
  // Its own credit: a receiver that grants more acknowledges in batches of
  // an eighth of this, not of its own, or this side would fill up and
  // wait for the receiver's socket to go quiet.
  hb.control.credit_messages = options_.credit_messages;
  hb.probe = probe_handle_;
  try {
    // No room (no connection yet): the next beat tries again.
    if (write_frames(socket_, wire::encode(hb), nullptr, /*dont_wait=*/true)) last_sent_ = now;
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR)
      throw WireError(error_message(where_, fmt::format("heartbeat failed: {}", e.what()), "", ""));
  }
}

}  // namespace sluice::channel_detail
