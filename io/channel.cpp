#include "io/channel.h"

#include <algorithm>

#include <zmq.hpp>

#include "devices/log.h"

namespace sluice {
namespace {

zmq::context_t& context() {
  static zmq::context_t ctx(1);
  return ctx;
}

zmq::socket_type socket_type_of(Pattern p) {
  switch (p) {
    case Pattern::Push: return zmq::socket_type::push;
    case Pattern::Pull: return zmq::socket_type::pull;
    case Pattern::Pub: return zmq::socket_type::pub;
    case Pattern::Sub: return zmq::socket_type::sub;
    case Pattern::Pair: return zmq::socket_type::pair;
  }
  return zmq::socket_type::pair;
}

// Smaller frames are copied into ZeroMQ's message: cheaper than the
// allocation and callback that lending the bytes costs.
constexpr size_t kZeroCopyBytes = 1024;

bool receives(Pattern p) { return p == Pattern::Pull || p == Pattern::Sub || p == Pattern::Pair; }

// The first 16 bytes of a header frame for one stream: a SUB socket filters
// on them, so a subscription is a stream id (for each kind and flag set).
std::vector<std::string> subscriptions(uint64_t stream_id) {
  std::vector<std::string> out;
  for (wire::Kind kind : {wire::Kind::Data, wire::Kind::EndOfStream, wire::Kind::Error}) {
    for (uint16_t flags : {uint16_t{0}, uint16_t{wire::kFlagCrc}}) {
      uint8_t h[wire::kHeaderBytes];
      wire::write_header({kind, flags, stream_id, 0, 0, 0}, h);
      out.emplace_back(reinterpret_cast<const char*>(h), 16);
    }
  }
  return out;
}

}  // namespace

struct Channel::Impl {
  Pattern pattern;
  std::string endpoint;
  std::string where;  // "channel ENDPOINT", as errors name it: made once, not per message
  ChannelOptions options;
  zmq::socket_t socket;
  uint64_t rejected = 0;
  std::string last_rejection;
};

Channel::Channel(Pattern pattern, const std::string& endpoint, ChannelOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& c = *impl_;
  c.pattern = pattern;
  c.options = std::move(options);
  if (endpoint.empty()) throw WireError("channel: expected an endpoint, found an empty string");
  bool bind = receives(pattern);
  std::string address = endpoint;
  if (address[0] == '@' || address[0] == '>') {
    bind = address[0] == '@';
    address.erase(0, 1);
  }
  c.endpoint = address;
  if (c.options.max_message_bytes <= 0)
    throw WireError("channel " + address + ": max_message_bytes: expected a positive limit, found " +
                    std::to_string(c.options.max_message_bytes));
  try {
    c.socket = zmq::socket_t(context(), socket_type_of(pattern));
    c.socket.set(zmq::sockopt::sndhwm, c.options.send_high_water_mark);
    c.socket.set(zmq::sockopt::rcvhwm, c.options.recv_high_water_mark);
    c.socket.set(zmq::sockopt::linger, static_cast<int>(c.options.linger.count()));
    // No single frame may exceed the limit: ZeroMQ drops such a peer before
    // buffering what it claims.
    c.socket.set(zmq::sockopt::maxmsgsize, c.options.max_message_bytes);
    if (pattern == Pattern::Sub) {
      if (c.options.subscribe.empty()) c.socket.set(zmq::sockopt::subscribe, "");
      for (uint64_t id : c.options.subscribe)
        for (const std::string& prefix : subscriptions(id)) c.socket.set(zmq::sockopt::subscribe, prefix);
    }
    if (bind) {
      c.socket.bind(address);
      // Name the address bound in messages (the port of tcp://host:*).
      c.endpoint = c.socket.get(zmq::sockopt::last_endpoint);
    } else {
      c.socket.connect(address);
    }
  } catch (const zmq::error_t& e) {
    throw WireError("channel " + endpoint + ": " + (bind ? "bind" : "connect") + " failed: " + e.what());
  }
  c.where = "channel " + c.endpoint;
}

Channel::~Channel() = default;
Channel::Channel(Channel&&) noexcept = default;
Channel& Channel::operator=(Channel&&) noexcept = default;

void Channel::send(const wire::Message& message) { send(message, std::chrono::milliseconds(-1)); }

bool Channel::send(const wire::Message& message, std::chrono::milliseconds timeout) {
  Impl& c = *impl_;
  std::vector<wire::Frame> frames = wire::encode(message, {.crc = c.options.crc});
  auto failed = [&](const zmq::error_t& e) {
    return WireError(c.where + ": send of seq " + std::to_string(message.header.seq) +
                     " failed: " + e.what());
  };
  // Only the first frame can find the queue full: ZeroMQ takes the rest of
  // a message it has started.
  if (timeout.count() >= 0) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      zmq::pollitem_t item{static_cast<void*>(c.socket), 0, ZMQ_POLLOUT, 0};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      try {
        if (zmq::poll(&item, 1, std::max(left, std::chrono::milliseconds(0))) > 0) break;
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw failed(e);
      }
      if (left.count() <= 0) return false;
    }
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    wire::Frame& f = frames[i];
    zmq::send_flags flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    zmq::message_t msg;
    if (f.size >= kZeroCopyBytes) {
      // Zero copy: ZeroMQ calls back when it is done with the bytes.
      auto* keep = new std::shared_ptr<const void>(std::move(f.owner));
      msg = zmq::message_t(const_cast<void*>(f.data), f.size,
                           [](void*, void* hint) { delete static_cast<std::shared_ptr<const void>*>(hint); }, keep);
    } else {
      msg = zmq::message_t(f.data, f.size);
    }
    try {
      c.socket.send(msg, flags);
    } catch (const zmq::error_t& e) {
      throw failed(e);
    }
  }
  return true;
}

void Channel::send(const std::vector<Tensor>& tensors, uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::Data, 0, stream_id, seq, 0, 0};
  m.tensors = tensors;
  send(m);
}

void Channel::send_end_of_stream(uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::EndOfStream, 0, stream_id, seq, 0, 0};
  send(m);
}

void Channel::send_error(const std::string& what, uint64_t seq, uint64_t stream_id) {
  wire::Message m;
  m.header = {wire::Kind::Error, 0, stream_id, seq, 0, 0};
  m.error = what;
  send(m);
}

std::optional<wire::Message> Channel::recv(std::chrono::milliseconds timeout) {
  Impl& c = *impl_;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // read from the clock only when waiting
  // Every valid tensor costs a header frame of at least 64 bytes, so the
  // byte limit bounds the number of frames too.
  const auto max_frames = static_cast<size_t>(c.options.max_message_bytes / 32 + 1);
  for (;;) {
    // One multipart message, kept whole in one owner so that a tensor made
    // from a data frame keeps the frame alive. Its size is checked as frames
    // arrive: past the limit, the rest is dropped unread.
    auto parts = std::make_shared<std::vector<zmq::message_t>>();
    parts->reserve(3);  // a message of one tensor: header, .npy header, data
    zmq::message_t part;
    int64_t total = 0;
    size_t frames_seen = 0;
    try {
      // Try first, poll only when nothing is waiting: a poll costs a system call.
      while (!c.socket.recv(part, zmq::recv_flags::dontwait)) {
        int wait_ms = -1;
        if (timeout.count() >= 0) {
          auto now = std::chrono::steady_clock::now();
          if (!deadline) deadline = now + timeout;
          auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - now);
          if (left.count() <= 0) return std::nullopt;
          wait_ms = static_cast<int>(left.count());
        }
        zmq::pollitem_t item{static_cast<void*>(c.socket), 0, ZMQ_POLLIN, 0};
        zmq::poll(&item, 1, std::chrono::milliseconds(wait_ms));
      }
      for (;;) {
        total += static_cast<int64_t>(part.size());
        ++frames_seen;
        bool more = part.more();
        if (total <= c.options.max_message_bytes && frames_seen <= max_frames) parts->push_back(std::move(part));
        if (!more) break;
        // The rest of a multipart message is already here: this never waits.
        (void)c.socket.recv(part, zmq::recv_flags::none);
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal: try again
      throw WireError(c.where + ": receive failed: " + e.what());
    }
    try {
      if (total > c.options.max_message_bytes)
        throw WireError(c.where + ": message size: expected at most max_message_bytes = " +
                        std::to_string(c.options.max_message_bytes) + " bytes, found " + std::to_string(total));
      if (frames_seen > max_frames)
        throw WireError(c.where + ": frame count: expected at most " + std::to_string(max_frames) +
                        " frames within max_message_bytes = " + std::to_string(c.options.max_message_bytes) +
                        ", found " + std::to_string(frames_seen));
      std::vector<wire::ReceivedFrame> frames;
      frames.reserve(parts->size());
      for (zmq::message_t& p : *parts)
        frames.push_back({{static_cast<const uint8_t*>(p.data()), p.size()}, std::shared_ptr<void>(parts, &p)});
      return wire::decode(std::move(frames), {.max_message_bytes = c.options.max_message_bytes}, c.where);
    } catch (const WireError& e) {
      ++c.rejected;
      c.last_rejection = e.what();
      logger().warn("{} (message skipped)", e.what());
    }
  }
}

uint64_t Channel::rejected() const { return impl_->rejected; }
const std::string& Channel::last_rejection() const { return impl_->last_rejection; }
const std::string& Channel::endpoint() const { return impl_->endpoint; }
std::string Channel::bound_endpoint() const { return impl_->socket.get(zmq::sockopt::last_endpoint); }
void* Channel::zmq_context() { return context().handle(); }

}  // namespace sluice
