#pragma once
// Request/reply over ZeroMQ: the transport of the exchanges that are not
// streams (a channel has no request/reply pattern). A ReplySocket answers
// many askers, each known by the identity its requests came with; a
// RequestSocket asks one. Serving (pipeline/serving.cpp) and a partitioned
// run's meeting (pipeline/meeting.cpp) use them, so that io owns every
// socket of sluice. Internal: io and the layers above it.
//
// Both live in the channels' context (inproc:// endpoints reach them, and
// CurveZMQ's ZAP handler answers them) and secure themselves as channels
// do (curve_socket.h). Thread safety: a socket is used by one thread at a
// time, and closed on the thread that last used it (see HandshakeWatch);
// handshakes() may be read from any thread, also after close().

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sluice/io/channel.h>
#include <sluice/io/detail/curve_socket.h>
#include <sluice/io/wire.h>

namespace sluice {

// A frame that owns a copy of `text` (for messages built of strings).
wire::Frame text_frame(std::string text);
// A received frame's bytes as a string.
std::string text_of(const wire::ReceivedFrame& frame);

// How a socket is set up; `where` names it in errors and in the log.
struct RequestReplyOptions {
  int64_t max_message_bytes = int64_t{1} << 30;  // a larger message is refused, the peer disconnected
  // How long frames still queued when the socket closes may take to leave.
  std::chrono::milliseconds linger{0};
  std::string where;
};

// The answering end (ZeroMQ ROUTER), bound or connected to `address`. With
// `secret` (this side's secret certificate) it is a CurveZMQ server that
// lets in the public certificates `allowed` and nothing else.
class ReplySocket {
 public:
  struct Request {
    std::string asker;  // the identity its answer goes to
    bool req = false;   // a REQ client: its answer starts with an empty delimiter
    std::vector<wire::ReceivedFrame> frames;  // kept alive by each frame's owner
  };

  ReplySocket(const std::string& address, bool bind, const RequestReplyOptions& options,
              const std::string& secret = {}, const std::vector<std::string>& allowed = {});
  ~ReplySocket();  // close()
  ReplySocket(const ReplySocket&) = delete;
  ReplySocket& operator=(const ReplySocket&) = delete;

  // The address bound or connected (tcp://127.0.0.1:54321 for port *).
  const std::string& endpoint() const { return endpoint_; }
  // Waits up to `wait` until a request is waiting or `wake_fd` (when not -1)
  // is readable; true when the fd is. WireError when polling fails.
  bool wait(std::chrono::milliseconds wait, int wake_fd = -1);
  // The next request waiting, whole; nullopt when none is.
  std::optional<Request> take();
  // Sends `frames` to `asker`; false (nothing sent, errno-style reason in
  // last_error()) when it would block or the asker is gone. Frames of 1 KiB
  // and more are lent to ZeroMQ (their owner kept until sent), not copied.
  bool answer(const std::string& asker, bool req, const std::vector<wire::Frame>& frames);
  std::string last_error() const;
  // The handshakes refused (0 without CurveZMQ).
  uint64_t refused() const;
  // Stops watching handshakes and closes the socket; queued answers leave
  // within the linger. Idempotent.
  void close();

 private:
  void* socket_ = nullptr;
  std::string endpoint_, where_;
  std::unique_ptr<CurveServer> curve_;
};

// The asking end (ZeroMQ DEALER), connected or bound to `address`. With
// curve.secret and curve.server it is the CurveZMQ client of that server.
class RequestSocket {
 public:
  RequestSocket(const std::string& address, bool bind, const RequestReplyOptions& options,
                const CurveOptions& curve = {});
  ~RequestSocket();
  RequestSocket(const RequestSocket&) = delete;
  RequestSocket& operator=(const RequestSocket&) = delete;

  const std::string& endpoint() const { return endpoint_; }
  // Queues `frames` as one request, waiting up to `timeout` for room (a
  // DEALER has none while no server is connected: one refused at the
  // handshake never is). Failed: ZeroMQ refused it, last_error() says why.
  enum class Sent : uint8_t { Yes, TimedOut, Failed };
  Sent send(const std::vector<wire::Frame>& frames, std::chrono::milliseconds timeout);
  std::string last_error() const;
  // The next answer's frames, or nullopt when none came within `timeout`.
  std::optional<std::vector<wire::ReceivedFrame>> receive(std::chrono::milliseconds timeout);
  // This end's handshakes: a refusal by the server shows here at once.
  const HandshakeWatch& handshakes() const { return *handshakes_; }

 private:
  void* socket_ = nullptr;
  std::string endpoint_, where_;
  std::unique_ptr<HandshakeWatch> handshakes_;
};

}  // namespace sluice
