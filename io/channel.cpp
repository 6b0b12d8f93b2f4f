// A Channel: its socket, set up for its pattern and delivery, and plain
// ZeroMQ sending and receiving. The reliable protocol's two ends are in
// reliable_sender.cpp and reliable_receiver.cpp.

#include <sluice/io/channel.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <sluice/base/detail/log.h>
#include <sluice/io/detail/channel_impl.h>
#include <sluice/ops/detail/error_format.h>

namespace sluice {

zmq::context_t& channel_context() {
  static zmq::context_t ctx(1);
  return ctx;
}

namespace {

using channel_detail::Clock;

bool receives(Pattern p) { return p == Pattern::Pull || p == Pattern::Sub || p == Pattern::Pair; }

// Reliable delivery is a conversation between one sender and its
// receiver: push and pull. Publishing and pairs stay plain ZeroMQ.
bool is_reliable(const ChannelOptions& o, Pattern p) {
  return o.delivery == Delivery::Reliable && (p == Pattern::Push || p == Pattern::Pull);
}

zmq::socket_type socket_type_of(Pattern p, bool reliable) {
  // Reliable: the receiver is a ROUTER (it answers each sender by its
  // routing id), each sender a DEALER (it reads the receiver's answers).
  if (reliable) return p == Pattern::Push ? zmq::socket_type::dealer : zmq::socket_type::router;
  switch (p) {
    case Pattern::Push: return zmq::socket_type::push;
    case Pattern::Pull: return zmq::socket_type::pull;
    case Pattern::Pub: return zmq::socket_type::pub;
    case Pattern::Sub: return zmq::socket_type::sub;
    case Pattern::Pair: return zmq::socket_type::pair;
  }
  return zmq::socket_type::pair;
}

const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::Push: return "push";
    case Pattern::Pull: return "pull";
    case Pattern::Pub: return "pub";
    case Pattern::Sub: return "sub";
    case Pattern::Pair: return "pair";
  }
  return "?";
}

// The first 16 bytes of a header frame for one stream: a SUB socket filters
// on them, so a subscription is a stream id (for each kind and flag set).
std::vector<std::string> subscriptions(uint64_t stream_id) {
  std::vector<std::string> out;
  for (wire::Kind kind :
       {wire::Kind::Data, wire::Kind::EndOfStream, wire::Kind::Error, wire::Kind::Barrier, wire::Kind::Update}) {
    for (uint16_t flags : {uint16_t{0}, uint16_t{wire::kFlagCrc}, uint16_t{wire::kFlagPacked},
                           uint16_t{wire::kFlagCrc | wire::kFlagPacked}}) {
      uint8_t h[wire::kHeaderBytes];
      wire::write_header({kind, flags, stream_id, 0, 0, 0}, h);
      out.emplace_back(reinterpret_cast<const char*>(h), 16);
    }
  }
  return out;
}

// Whether a process is listening on the Unix socket at `path`: ZeroMQ
// unlinks an ipc path before binding it, so a second binder would quietly
// steal the first one's peers. A stale file refuses the connection.
bool ipc_path_in_use(const std::string& path) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  // "@name" is Linux's abstract namespace (as ZeroMQ reads it): a name that
  // starts with a NUL byte and is as long as it is, no file on disk.
  socklen_t length = sizeof addr;
  if (path[0] == '@') {
    addr.sun_path[0] = '\0';
    length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool live = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), length) == 0;
  ::close(fd);
  return live;
}

// A tcp endpoint's port must be '*' or 1 to 65535: ZeroMQ would take a
// larger number modulo 65536 and bind some other port.
void check_tcp_port(const std::string& address) {
  if (address.rfind("tcp://", 0) != 0) return;
  size_t colon = address.rfind(':');
  std::string port = colon == std::string::npos || colon < 6 ? "" : address.substr(colon + 1);
  if (port == "*") return;
  bool digits = !port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), ::isdigit);
  if (!digits || std::stoi(port) < 1 || std::stoi(port) > 65535)
    throw WireError(error_message("channel " + address, "port", "1 to 65535 or *", "'" + port + "'"));
}

void validate(const ChannelOptions& o, Pattern pattern, const std::string& where) {
  auto fail = [&](std::string_view what, std::string_view expected, const auto& found) {
    throw WireError(error_message(where, what, expected, found));
  };
  if (o.max_message_bytes <= 0) fail("max_message_bytes", "a positive limit", o.max_message_bytes);
  if (o.send_high_water_mark < 0 || o.recv_high_water_mark < 0)
    fail("high-water marks", "0 (none) or more",
         fmt::format("{} and {}", o.send_high_water_mark, o.recv_high_water_mark));
  // An allow-list without this side's key would let every plaintext peer
  // in, and a server key without it would send in plaintext: never taken
  // for CurveZMQ.
  if (o.curve.secret.empty() && (!o.curve.allow.empty() || !o.curve.server.empty()))
    throw ConfigError(error_message(where, "curve", "a secret certificate beside the allow directory or server",
                                    o.curve.allow.empty() ? "server '" + o.curve.server + "' and no secret"
                                                          : "allow '" + o.curve.allow + "' and no secret"));
  if (!o.curve.secret.empty() && receives(pattern) && o.curve.allow.empty())
    throw ConfigError(error_message(where, "curve", "an allow directory of the senders' public certificates",
                                    "a secret and none"));
  if (!is_reliable(o, pattern)) return;
  if (o.credit_messages == 0 || o.credit_bytes == 0)
    fail("credit", "at least 1 message and 1 byte",
         fmt::format("{} messages and {} bytes", o.credit_messages, o.credit_bytes));
  if (o.heartbeat_interval.count() <= 0 || o.missed_heartbeats < 1)
    fail("heartbeats", "an interval above 0 ms and at least 1 missed beat",
         fmt::format("{} ms and {}", o.heartbeat_interval.count(), o.missed_heartbeats));
  if (o.peer_timeout.count() < 0) fail("peer_timeout", "0 ms or more", "a negative time");
  if (o.coalesce_delay.count() < 0) fail("coalesce_delay", "0 us (no coalescing) or more", "a negative time");
  // A ring's entries are 8-byte aligned and at most a quarter of it; its
  // indices are 64-bit byte counts.
  if (o.ring_bytes != 0 &&
      (!std::has_single_bit(o.ring_bytes) || o.ring_bytes < 4096 || o.ring_bytes > (size_t{1} << 32)))
    fail("ring_bytes", "0 (no rings) or a power of two from 4096 to 2^32", o.ring_bytes);
  if (o.ring_spin.count() < 0) fail("ring_spin", "0 us (no spinning) or more", "a negative time");
}

}  // namespace

Channel::Channel(Pattern pattern, const std::string& endpoint, ChannelOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& c = *impl_;
  c.pattern = pattern;
  c.options = std::move(options);
  if (endpoint.empty()) throw WireError(error_message("channel", "", "an endpoint", "an empty string"));
  bool bind = receives(pattern);
  std::string address = endpoint;
  if (address[0] == '@' || address[0] == '>') {
    bind = address[0] == '@';
    address.erase(0, 1);
  }
  c.endpoint = address;
  validate(c.options, pattern, "channel " + address);
  // Within one process (inproc) frames lend the tensors' memory already;
  // and a CRC is of bytes on a wire, which shared memory does not cross.
  if (address.starts_with("inproc://") || c.options.crc) c.options.shared_memory = false;
  check_tcp_port(address);
  const bool reliable = is_reliable(c.options, pattern);
  try {
    c.socket = zmq::socket_t(channel_context(), socket_type_of(pattern, reliable));
    c.socket.set(zmq::sockopt::rcvhwm, c.options.recv_high_water_mark);
    c.socket.set(zmq::sockopt::linger, static_cast<int>(c.options.linger.count()));
    // No single frame may exceed the limit: ZeroMQ drops such a peer before
    // buffering what it claims.
    c.socket.set(zmq::sockopt::maxmsgsize, c.options.max_message_bytes);
    if (!channel_detail::set_reconnect_backoff(c.socket.handle())) throw zmq::error_t();
    if (reliable) {
      // Credit bounds what is queued, not a high-water mark, which would
      // only make ZeroMQ refuse or drop.
      c.socket.set(zmq::sockopt::sndhwm, 0);
      if (pattern == Pattern::Push) {
        // Queue only on connections that are up: what a dead connection
        // held is sent again by the protocol, never by ZeroMQ to whoever
        // comes next.
        c.socket.set(zmq::sockopt::immediate, true);
      } else {
        // A sender that reconnects takes its routing id back; a message to
        // a sender that is gone fails instead of vanishing.
        c.socket.set(zmq::sockopt::router_handover, true);
        c.socket.set(zmq::sockopt::router_mandatory, true);
      }
    } else {
      c.socket.set(zmq::sockopt::sndhwm, c.options.send_high_water_mark);
    }
    if (!c.options.curve.secret.empty()) {
      if (receives(pattern))
        c.curve = std::make_unique<CurveServer>(c.socket.handle(), c.options.curve.secret,
                                                certificates_in(c.options.curve.allow, "channel " + address),
                                                "channel " + address);
      else
        configure_curve_client(c.socket.handle(), c.options.curve, "channel " + address);
    }
    // Before it connects: a receiver that refuses it is named, not waited for.
    if (reliable && pattern == Pattern::Push)
      c.handshakes = std::make_unique<HandshakeWatch>(c.socket.handle(), "channel " + address);
    if (pattern == Pattern::Sub) {
      if (c.options.subscribe.empty()) c.socket.set(zmq::sockopt::subscribe, "");
      for (uint64_t id : c.options.subscribe)
        for (const std::string& prefix : subscriptions(id)) c.socket.set(zmq::sockopt::subscribe, prefix);
    }
    if (reliable && pattern == Pattern::Push)
      c.socket.set(zmq::sockopt::routing_id, zmq::buffer(channel_detail::routing_id_of(channel_detail::new_session())));
    if (bind) {
      if (address.rfind("ipc://", 0) == 0 && ipc_path_in_use(address.substr(6)))
        throw WireError(
            error_message("channel " + address, "bind", "a free ipc path",
                          "one a live process is listening on (ZeroMQ would take it over silently)"));
      c.socket.bind(address);
      // Name the address bound in messages (the port of tcp://host:*).
      c.endpoint = c.socket.get(zmq::sockopt::last_endpoint);
      if (c.endpoint.rfind("ipc://", 0) == 0) c.ipc_path = c.endpoint.substr(6);
    } else {
      c.socket.connect(address);
    }
  } catch (const zmq::error_t& e) {
    throw WireError(error_message("channel " + endpoint,
                                  fmt::format("{} failed: {}", bind ? "bind" : "connect", e.what()), "", ""));
  }
  c.bound = c.socket.get(zmq::sockopt::last_endpoint);
  c.where = "channel " + c.endpoint;
  // Last: a reliable sender's pacemaker uses the socket from now on.
  if (reliable && pattern == Pattern::Push)
    c.sender = std::make_unique<channel_detail::ReliableSender>(c.socket, c.options, c.where, c.handshakes.get());
  if (reliable && pattern == Pattern::Pull)
    c.receiver = std::make_unique<channel_detail::ReliableReceiver>(c.socket, c.options, c.where);
}

Channel::Impl::~Impl() {
  sender.reset();
  receiver.reset();
  // Before the socket closes: they stop its monitor (HandshakeWatch).
  curve.reset();
  handshakes.reset();
  socket.close();
  if (ipc_path.empty()) return;
  // ZeroMQ leaves the file; a closed listener refuses connections. The
  // listener closes within microseconds of the socket; the bound keeps a
  // wedged I/O thread from hanging the caller.
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  while (ipc_path_in_use(ipc_path) && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

Channel::~Channel() = default;
Channel::Channel(Channel&&) noexcept = default;
Channel& Channel::operator=(Channel&&) noexcept = default;

namespace {

// What every send comes to, taking the message to keep (reliable) or
// encode: the helpers below build theirs and move it here, so that a
// message is not copied on its way.
bool send_message(Channel::Impl& c, wire::Message&& message, std::chrono::milliseconds timeout) {
  if (receives(c.pattern) && c.pattern != Pattern::Pair)
    throw WireError(error_message(
        c.where, fmt::format("send: a {} channel only receives", pattern_name(c.pattern)), "", ""));
  if (c.sender) return c.sender->send(std::move(message), timeout);
  std::vector<wire::Frame> frames =
      wire::encode(message, {.crc = c.options.crc, .pack_below = c.options.pack_below});
  try {
    if (timeout.count() >= 0) {
      auto deadline = Clock::now() + timeout;
      for (;;) {
        zmq::pollitem_t item{static_cast<void*>(c.socket), 0, ZMQ_POLLOUT, 0};
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        try {
          if (zmq::poll(&item, 1, std::max(left, std::chrono::milliseconds(0))) > 0) break;
        } catch (const zmq::error_t& e) {
          if (e.num() != EINTR) throw;
        }
        if (left.count() <= 0) return false;
      }
    }
    channel_detail::write_frames(c.socket, frames, nullptr, false);
  } catch (const zmq::error_t& e) {
    throw WireError(error_message(
        c.where, fmt::format("send of seq {} failed: {}", message.header.seq, e.what()), "", ""));
  }
  return true;
}

constexpr std::chrono::milliseconds kForever{-1};

}  // namespace

void Channel::send(const wire::Message& message) { send_message(*impl_, wire::Message(message), kForever); }

bool Channel::send(const wire::Message& message, std::chrono::milliseconds timeout) {
  return send_message(*impl_, wire::Message(message), timeout);
}

void Channel::send(std::vector<Tensor> tensors, uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::Data, 0, stream_id, seq, 0, 0};
  m.tensors = std::move(tensors);
  send_message(*impl_, std::move(m), kForever);
}

void Channel::send_end_of_stream(uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::EndOfStream, 0, stream_id, seq, 0, 0};
  send_message(*impl_, std::move(m), kForever);
}

void Channel::send_error(const std::string& what, uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::Error, 0, stream_id, seq, 0, 0};
  m.error = what;
  send_message(*impl_, std::move(m), kForever);
}

namespace {

wire::Message barrier(uint64_t checkpoint, uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::Barrier, 0, stream_id, seq, 0, 0};
  m.checkpoint = checkpoint;
  return m;
}

}  // namespace

void Channel::send_barrier(uint64_t checkpoint, uint64_t seq, uint64_t stream_id) {
  send_message(*impl_, barrier(checkpoint, seq, stream_id), kForever);
}

bool Channel::send_barrier(uint64_t checkpoint, uint64_t seq, uint64_t stream_id,
                           std::chrono::milliseconds timeout) {
  return send_message(*impl_, barrier(checkpoint, seq, stream_id), timeout);
}

void Channel::send_update(const std::string& target, const std::vector<Tensor>& tensors, uint64_t seq,
                          uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::Update, 0, stream_id, seq, 0, 0};
  m.target = target;
  m.tensors = tensors;
  send_message(*impl_, std::move(m), kForever);
}

void Channel::flush(std::chrono::milliseconds timeout) {
  if (impl_->sender) impl_->sender->flush(timeout);
}

std::optional<wire::Message> Channel::recv(std::chrono::milliseconds timeout) {
  Impl& c = *impl_;
  if (!receives(c.pattern))
    throw WireError(error_message(
        c.where, fmt::format("recv: a {} channel only sends", pattern_name(c.pattern)), "", ""));
  if (c.receiver) return c.receiver->recv(timeout);
  std::optional<Clock::time_point> deadline;  // read from the clock only when waiting
  // Every valid tensor costs a header frame of at least 64 bytes, so the
  // byte limit bounds the number of frames too.
  const auto max_frames = static_cast<size_t>(c.options.max_message_bytes / 32 + 1);
  channel_detail::Incoming in;
  for (;;) {
    try {
      // Try first, poll only when nothing is waiting: a poll costs a system call.
      while (!channel_detail::read_multipart(c.socket, in, c.options.max_message_bytes, max_frames)) {
        auto wait = std::chrono::milliseconds(-1);
        if (timeout.count() >= 0) {
          auto now = Clock::now();
          if (!deadline) deadline = now + timeout;
          wait = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - now);
          if (wait.count() <= 0) return std::nullopt;
        }
        channel_detail::wait_readable(c.socket, -1, wait);
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal: try again
      throw WireError(error_message(c.where, fmt::format("receive failed: {}", e.what()), "", ""));
    }
    try {
      static const wire::MapShared plain = channel_detail::refuse_shared(
          "shared-memory references on a plain channel (it cannot tell the sender when it has read them)");
      wire::Message m =
          channel_detail::decode_incoming(in, 0, c.options.max_message_bytes, max_frames, c.where, plain);
      if (wire::is_control(m.header.kind))
        throw WireError(
            error_message(fmt::format("{}: seq {}", c.where, m.header.seq), "kind",
                          "data, end of stream, error, checkpoint barrier or update on a plain channel",
                          fmt::format("{} (is the peer reliable?)", wire::kind_name(m.header.kind))));
      return m;
    } catch (const WireError& e) {
      ++c.rejected;
      c.last_rejection = e.what();
      logger().warn("{} (message skipped)", e.what());
    }
  }
}

void Channel::ack(const wire::Message& message) {
  if (impl_->receiver && message.peer != 0) impl_->receiver->acks()->push(message.peer, message.header.seq);
}

std::function<void(uint64_t, uint64_t)> Channel::acknowledger() {
  if (!impl_->receiver) return [](uint64_t, uint64_t) {};
  std::weak_ptr<channel_detail::AckQueue> queue = impl_->receiver->acks();
  return [queue](uint64_t peer, uint64_t seq) {
    if (auto q = queue.lock()) q->push(peer, seq);
  };
}

namespace {

// Commits need a receiver that keeps acknowledgement for them.
void check_commits(const Channel::Impl& c) {
  if (c.options.acknowledge != Acknowledge::Checkpoint)
    throw WireError(
        error_message(c.where, "commit", "a receiver with acknowledge = Checkpoint",
                      fmt::format("{} (its acks acknowledge already)",
                                  c.options.acknowledge == Acknowledge::Manual ? "Manual" : "OnNextRecv")));
}

}  // namespace

void Channel::set_acknowledge(Acknowledge acknowledge) {
  if (!impl_->receiver) return;
  if (impl_->receiver->met_any())
    throw WireError(
        error_message(impl_->where, "set_acknowledge", "it before the first recv", "senders met"));
  impl_->options.acknowledge = acknowledge;  // the receiver reads its options by reference
}

void Channel::commit(uint64_t peer, uint64_t seq) {
  if (!impl_->receiver) return;
  check_commits(*impl_);
  if (peer != 0) impl_->receiver->acks()->push(peer, seq, channel_detail::AckQueue::What::Commit);
}

std::function<void(uint64_t, uint64_t)> Channel::committer() {
  if (!impl_->receiver) return [](uint64_t, uint64_t) {};
  check_commits(*impl_);
  std::weak_ptr<channel_detail::AckQueue> queue = impl_->receiver->acks();
  return [queue](uint64_t peer, uint64_t seq) {
    if (auto q = queue.lock(); q && peer != 0) q->push(peer, seq, channel_detail::AckQueue::What::Commit);
  };
}

void Channel::resume_stream(uint64_t stream_id, uint64_t next_seq) {
  if (!impl_->receiver)
    throw WireError(error_message(impl_->where, "resume_stream", "a reliable receiving channel (push/pull)",
                                  fmt::format("a {} one", impl_->sender ? "sending" : "plain")));
  impl_->receiver->resume_stream(stream_id, next_seq);
}

void Channel::keep_alive() {
  if (impl_->receiver) impl_->receiver->keep_alive();
}

void Channel::refuse(const wire::Message& message, const std::string& why) {
  if (!impl_->receiver)
    throw WireError(error_message(
        fmt::format("{}: refuse: seq {}", impl_->where, message.header.seq), "",
        "a reliable receiving channel (push/pull)",
        fmt::format("a {} one (it has no way back to its sender)", impl_->sender ? "sending" : "plain")));
  impl_->receiver->refuse(message, why);
}

std::vector<Refusal> Channel::refusals() const {
  return impl_->sender ? impl_->sender->refusals() : std::vector<Refusal>{};
}

uint64_t Channel::rejected() const {
  const Impl& c = *impl_;
  return c.rejected + (c.receiver ? c.receiver->rejected() : 0) + (c.sender ? c.sender->rejected() : 0);
}

const std::string& Channel::last_rejection() const {
  return impl_->receiver ? impl_->receiver->last_rejection() : impl_->last_rejection;
}

ChannelCounters Channel::counters() const {
  Impl& c = *impl_;
  ChannelCounters n;
  n.rejected = rejected();
  if (c.curve) n.refused = c.curve->handshakes().refused();
  if (c.handshakes) n.refused = c.handshakes->failed();
  if (c.receiver) {
    n.duplicates = c.receiver->duplicates();
    n.peers_lost = c.receiver->peers_lost();
    n.refusals = c.receiver->refusals_sent();
    n.shared = c.receiver->shared();
    n.ringed = c.receiver->ringed();
    n.records_ringed = c.receiver->records_ringed();
    n.copied = c.receiver->copied();
  }
  if (c.sender) {
    n.resent = c.sender->resent();
    n.peers_lost = c.sender->peers_lost();
    n.unacknowledged = c.sender->unacknowledged();
    n.credit = c.sender->credit();
    n.refusals = c.sender->refusals_received();
    n.shared = c.sender->shared();
    n.coalesced = c.sender->coalesced();
    n.ringed = c.sender->ringed();
    n.records_ringed = c.sender->records_ringed();
  }
  return n;
}

const std::string& Channel::endpoint() const { return impl_->endpoint; }
std::string Channel::bound_endpoint() const { return impl_->bound; }
void* Channel::zmq_context() { return channel_context().handle(); }

}  // namespace sluice
