// Request/reply over ZeroMQ (request_reply.h): the ROUTER and DEALER
// sockets of serving and of the meeting, their frames, and their CurveZMQ.

#include <sluice/io/detail/request_reply.h>

#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <utility>

#include <fmt/core.h>

#include <sluice/base/detail/error_format.h>

namespace sluice {
namespace {

constexpr size_t kLendAbove = 1024;  // frames at least this large are lent to ZeroMQ, not copied

std::string zmq_error() { return zmq_strerror(zmq_errno()); }

// The parts of one received message, closed together when the last frame
// made of them is dropped.
struct Parts {
  std::vector<zmq_msg_t> messages;
  Parts() = default;
  Parts(const Parts&) = delete;
  Parts& operator=(const Parts&) = delete;
  ~Parts() {
    for (zmq_msg_t& m : messages) zmq_msg_close(&m);
  }
};

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

// Sends `head` (copied) then `frames` as one message; false (nothing sent)
// when ZeroMQ refused the first part (with ZMQ_DONTWAIT: no room; on a
// ROUTER: no such peer).
bool send_parts(void* socket, const std::vector<std::string>& head, const std::vector<wire::Frame>& frames,
                int flags) {
  const size_t total = head.size() + frames.size();
  for (size_t i = 0; i < total; ++i) {
    zmq_msg_t part;
    if (i < head.size()) {
      zmq_msg_init_size(&part, head[i].size());
      if (!head[i].empty()) std::memcpy(zmq_msg_data(&part), head[i].data(), head[i].size());
    } else if (const wire::Frame& f = frames[i - head.size()]; f.size >= kLendAbove) {
      // ZeroMQ holds the frame's owner until the bytes are on the wire.
      auto* owner = new std::shared_ptr<const void>(f.owner);
      zmq_msg_init_data(
          &part, const_cast<void*>(f.data), f.size,
          [](void*, void* hint) { delete static_cast<std::shared_ptr<const void>*>(hint); }, owner);
    } else {
      zmq_msg_init_size(&part, f.size);
      if (f.size > 0) std::memcpy(zmq_msg_data(&part), f.data, f.size);
    }
    if (zmq_msg_send(&part, socket, flags | (i + 1 < total ? ZMQ_SNDMORE : 0)) < 0) {
      zmq_msg_close(&part);
      return false;  // only the first part can fail: ZeroMQ takes the rest of a message it started
    }
  }
  return true;
}

// Every part of the next message, or null when none is waiting.
std::shared_ptr<Parts> read_parts(void* socket, const std::string& where) {
  auto parts = std::make_shared<Parts>();
  for (;;) {
    zmq_msg_t part;
    zmq_msg_init(&part);
    // The first part says whether a message is there; the rest of it is, whole.
    if (zmq_msg_recv(&part, socket, parts->messages.empty() ? ZMQ_DONTWAIT : 0) < 0) {
      const int error = zmq_errno();
      zmq_msg_close(&part);
      if (error == EINTR) continue;
      if (parts->messages.empty() && error == EAGAIN) return nullptr;
      throw WireError(error_message(where, fmt::format("receive failed: {}", zmq_strerror(error)), "", ""));
    }
    const bool more = zmq_msg_more(&part) != 0;
    parts->messages.push_back(part);
    if (!more) return parts;
  }
}

// parts[first...] as received frames, which keep every part alive.
std::vector<wire::ReceivedFrame> frames_from(const std::shared_ptr<Parts>& parts, size_t first) {
  std::vector<wire::ReceivedFrame> frames;
  for (size_t i = first; i < parts->messages.size(); ++i) {
    zmq_msg_t& p = parts->messages[i];
    frames.push_back({wire::Bytes(static_cast<const uint8_t*>(zmq_msg_data(&p)), zmq_msg_size(&p)), parts});
  }
  return frames;
}

// Polls `socket` (and `fd` when not -1) for up to `wait`; whether each is readable.
std::pair<bool, bool> poll(void* socket, int fd, std::chrono::milliseconds wait, const std::string& where) {
  zmq_pollitem_t items[] = {{socket, 0, ZMQ_POLLIN, 0}, {nullptr, fd, ZMQ_POLLIN, 0}};
  if (zmq_poll(items, fd == -1 ? 1 : 2, static_cast<long>(wait.count())) < 0) {
    if (zmq_errno() == EINTR) return {false, false};
    throw WireError(error_message(where, "poll failed: " + zmq_error(), "", ""));
  }
  return {(items[0].revents & ZMQ_POLLIN) != 0, fd != -1 && (items[1].revents & ZMQ_POLLIN) != 0};
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
  return poll(socket_, wake_fd, wait, where_).second;
}

std::optional<ReplySocket::Request> ReplySocket::take() {
  std::shared_ptr<Parts> parts = read_parts(socket_, where_);
  if (!parts) return std::nullopt;
  std::vector<zmq_msg_t>& m = parts->messages;
  Request r;
  r.asker.assign(static_cast<const char*>(zmq_msg_data(&m[0])), zmq_msg_size(&m[0]));
  r.req = m.size() >= 2 && zmq_msg_size(&m[1]) == 0;
  r.frames = frames_from(parts, r.req ? 2 : 1);
  return r;
}

bool ReplySocket::answer(const std::string& asker, bool req, const std::vector<wire::Frame>& frames) {
  std::vector<std::string> head{asker};
  if (req) head.emplace_back();
  return send_parts(socket_, head, frames, ZMQ_DONTWAIT);
}

std::string ReplySocket::last_error() const { return zmq_error(); }

uint64_t ReplySocket::refused() const { return curve_ ? curve_->handshakes().failed() : 0; }

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

bool RequestSocket::send(const std::vector<wire::Frame>& frames) { return send_parts(socket_, {}, frames, 0); }

std::string RequestSocket::last_error() const { return zmq_error(); }

std::optional<std::vector<wire::ReceivedFrame>> RequestSocket::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (std::shared_ptr<Parts> parts = read_parts(socket_, where_)) return frames_from(parts, 0);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    poll(socket_, -1, left, where_);
  }
}

}  // namespace sluice
