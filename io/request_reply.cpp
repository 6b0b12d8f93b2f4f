// Request/reply over ZeroMQ (request_reply.h): the ROUTER and DEALER
// sockets of serving and of the meeting, their frames, and their CurveZMQ.

#include <sluice/io/detail/request_reply.h>

#include <cerrno>
#include <functional>
#include <limits>
#include <utility>

#include <fmt/core.h>

#include <sluice/base/detail/error_format.h>
#include <sluice/io/detail/channel_impl.h>

namespace sluice {
namespace {

std::string zmq_error() { return zmq_strerror(zmq_errno()); }

zmq::socket_ref ref(void* socket) { return {zmq::from_handle, socket}; }

// A socket of the channels' context, bound or connected; WireError naming
// `where` when that fails. `secure` sets up CurveZMQ and the handshake
// watch before any peer comes; `unsecure` undoes it before the socket
// closes when binding or connecting fails (HandshakeWatch).
void* open_socket(int type, const std::string& address, bool bind, const RequestReplyOptions& options,
                  const std::function<void(void*)>& secure, const std::function<void()>& unsecure) {
  void* socket = zmq_socket(Channel::zmq_context(), type);
  if (socket == nullptr) throw WireError(error_message(options.where, "socket: " + zmq_error(), "", ""));
  const int linger = static_cast<int>(options.linger.count());
  const int on = 1;
  bool ok = zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger) == 0 &&
            zmq_setsockopt(socket, ZMQ_MAXMSGSIZE, &options.max_message_bytes,
                           sizeof options.max_message_bytes) == 0;
  // An answer to an asker that is gone fails instead of vanishing unseen.
  if (ok && type == ZMQ_ROUTER) ok = zmq_setsockopt(socket, ZMQ_ROUTER_MANDATORY, &on, sizeof on) == 0;
  if (ok) ok = channel_detail::set_reconnect_backoff(socket);
  if (ok) {
    try {
      secure(socket);
    } catch (...) {
      unsecure();
      zmq_close(socket);
      throw;
    }
  }
  if (ok) ok = (bind ? zmq_bind(socket, address.c_str()) : zmq_connect(socket, address.c_str())) == 0;
  if (!ok) {
    std::string why = zmq_error();
    unsecure();
    zmq_close(socket);
    throw WireError(
        error_message(options.where, fmt::format("{} {} failed: {}", bind ? "bind" : "connect", address, why), "", ""));
  }
  return socket;
}

std::string last_endpoint(void* socket, const std::string& otherwise) {
  char text[1024] = {};
  size_t size = sizeof text;
  if (zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, text, &size) != 0 || text[0] == '\0') return otherwise;
  return text;
}

// The next message whole, nothing when none is waiting (or a signal came).
// ZMQ_MAXMSGSIZE bounds it already: the socket drops a peer that sends more.
std::optional<channel_detail::Incoming> next_message(void* socket, const std::string& where) {
  channel_detail::Incoming in;
  try {
    if (channel_detail::read_multipart(ref(socket), in, std::numeric_limits<int64_t>::max(),
                                       std::numeric_limits<size_t>::max()))
      return in;
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw WireError(error_message(where, fmt::format("receive failed: {}", e.what()), "", ""));
  }
  return std::nullopt;
}

// Sends `frames` after `routing_id` (when given); false when ZeroMQ refuses
// the message (no room with dont_wait; on a ROUTER, no such peer).
bool send_message(void* socket, const std::vector<wire::Frame>& frames, const std::string* routing_id,
                  bool dont_wait) {
  try {
    return channel_detail::write_frames(ref(socket), frames, routing_id, dont_wait);
  } catch (const zmq::error_t&) {
    return false;  // zmq_errno() says why
  }
}

}  // namespace

wire::Frame text_frame(std::string text) {
  auto owner = std::make_shared<std::string>(std::move(text));
  return {owner->data(), owner->size(), owner};
}

std::string text_of(const wire::ReceivedFrame& frame) {
  return {reinterpret_cast<const char*>(frame.bytes.data()), frame.bytes.size()};
}

ReplySocket::ReplySocket(const std::string& address, bool bind, const RequestReplyOptions& options,
                         const std::string& secret, const std::vector<std::string>& allowed)
    : where_(options.where) {
  socket_ = open_socket(
      ZMQ_ROUTER, address, bind, options,
      [&](void* s) {
        if (!secret.empty()) curve_ = std::make_unique<CurveServer>(s, secret, allowed, where_);
      },
      [this] { curve_.reset(); });
  endpoint_ = last_endpoint(socket_, address);
}

ReplySocket::~ReplySocket() { close(); }

void ReplySocket::close() {
  if (socket_ == nullptr) return;
  if (curve_) curve_->stop_watching();  // before the socket closes
  zmq_close(socket_);
  socket_ = nullptr;
}

bool ReplySocket::wait(std::chrono::milliseconds wait, int wake_fd) {
  return channel_detail::wait_readable(ref(socket_), wake_fd, wait);
}

std::optional<ReplySocket::Request> ReplySocket::take() {
  std::optional<channel_detail::Incoming> in = next_message(socket_, where_);
  if (!in) return std::nullopt;
  const std::vector<zmq::message_t>& parts = *in->parts;
  Request r;
  r.asker = parts[0].to_string();
  r.req = parts.size() >= 2 && parts[1].size() == 0;
  r.frames = channel_detail::received_frames(*in, r.req ? 2 : 1);
  return r;
}

bool ReplySocket::answer(const std::string& asker, bool req, const std::vector<wire::Frame>& frames) {
  if (!req) return send_message(socket_, frames, &asker, /*dont_wait=*/true);
  std::vector<wire::Frame> delimited{wire::Frame{}};  // a REQ client's empty delimiter
  delimited.insert(delimited.end(), frames.begin(), frames.end());
  return send_message(socket_, delimited, &asker, /*dont_wait=*/true);
}

std::string ReplySocket::last_error() const { return zmq_error(); }

uint64_t ReplySocket::refused() const { return curve_ ? curve_->handshakes().refused() : 0; }

RequestSocket::RequestSocket(const std::string& address, bool bind, const RequestReplyOptions& options,
                             const CurveOptions& curve)
    : where_(options.where) {
  socket_ = open_socket(
      ZMQ_DEALER, address, bind, options,
      [&](void* s) {
        if (!curve.secret.empty()) configure_curve_client(s, curve, where_);
        handshakes_ = std::make_unique<HandshakeWatch>(s, where_);
      },
      [this] { handshakes_.reset(); });
  endpoint_ = bind ? last_endpoint(socket_, address) : address;
}

RequestSocket::~RequestSocket() {
  handshakes_.reset();  // before the socket closes (HandshakeWatch)
  zmq_close(socket_);
}

RequestSocket::Sent RequestSocket::send(const std::vector<wire::Frame>& frames,
                                        std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (send_message(socket_, frames, nullptr, /*dont_wait=*/true)) return Sent::Yes;
    if (zmq_errno() != EAGAIN) return Sent::Failed;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Sent::TimedOut;
    zmq::pollitem_t room{socket_, 0, ZMQ_POLLOUT, 0};
    try {
      zmq::poll(&room, 1, std::min(left, std::chrono::milliseconds(100)));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) return Sent::Failed;
    }
  }
}

std::string RequestSocket::last_error() const { return zmq_error(); }

std::optional<std::vector<wire::ReceivedFrame>> RequestSocket::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (std::optional<channel_detail::Incoming> in = next_message(socket_, where_))
      return channel_detail::received_frames(*in, 0);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    channel_detail::wait_readable(ref(socket_), -1, left);
  }
}

}  // namespace sluice
