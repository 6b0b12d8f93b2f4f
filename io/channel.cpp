#include "io/channel.h"

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
    c.socket.set(zmq::sockopt::maxmsgsize, c.options.max_message_bytes + 65536);
    if (pattern == Pattern::Sub) {
      if (c.options.subscribe.empty()) c.socket.set(zmq::sockopt::subscribe, "");
      for (uint64_t id : c.options.subscribe)
        for (const std::string& prefix : subscriptions(id)) c.socket.set(zmq::sockopt::subscribe, prefix);
    }
    if (bind) c.socket.bind(address);
    else c.socket.connect(address);
  } catch (const zmq::error_t& e) {
    throw WireError("channel " + endpoint + ": " + (bind ? "bind" : "connect") + " failed: " + e.what());
  }
}

Channel::~Channel() = default;
Channel::Channel(Channel&&) noexcept = default;
Channel& Channel::operator=(Channel&&) noexcept = default;

void Channel::send(const wire::Message& message) {
  Impl& c = *impl_;
  std::vector<wire::Frame> frames = wire::encode(message, {.crc = c.options.crc});
  for (size_t i = 0; i < frames.size(); ++i) {
    wire::Frame& f = frames[i];
    zmq::send_flags flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
    zmq::message_t msg;
    if (f.size >= 1024) {
      // Zero copy: ZeroMQ calls back when it is done with the bytes.
      auto* keep = new std::shared_ptr<const void>(f.owner);
      msg = zmq::message_t(const_cast<void*>(f.data), f.size,
                           [](void*, void* hint) { delete static_cast<std::shared_ptr<const void>*>(hint); }, keep);
    } else {
      msg = zmq::message_t(f.data, f.size);
    }
    try {
      c.socket.send(msg, flags);
    } catch (const zmq::error_t& e) {
      throw WireError("channel " + c.endpoint + ": send of seq " + std::to_string(message.header.seq) +
                      " failed: " + e.what());
    }
  }
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
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int wait_ms = -1;
    if (timeout.count() >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() < 0) return std::nullopt;
      wait_ms = static_cast<int>(left.count());
    }
    zmq::pollitem_t item{static_cast<void*>(c.socket), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(wait_ms)) == 0) return std::nullopt;

    // One multipart message; the byte total is checked as frames arrive,
    // before anything is decoded.
    std::vector<wire::ReceivedFrame> frames;
    int64_t total = 0;
    bool too_big = false;
    for (;;) {
      auto part = std::make_shared<zmq::message_t>();
      if (!c.socket.recv(*part, zmq::recv_flags::none)) break;
      total += static_cast<int64_t>(part->size());
      bool more = part->more();
      if (total > c.options.max_message_bytes + 65536 * 8) too_big = true;
      if (!too_big) frames.push_back({{static_cast<const uint8_t*>(part->data()), part->size()}, part});
      if (!more) break;
    }
    try {
      if (too_big)
        throw WireError("channel " + c.endpoint + ": message of " + std::to_string(total) +
                        " bytes, above max_message_bytes = " + std::to_string(c.options.max_message_bytes));
      return wire::decode(std::move(frames), {.max_message_bytes = c.options.max_message_bytes},
                          "channel " + c.endpoint);
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

}  // namespace sluice
