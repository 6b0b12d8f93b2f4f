#pragma once
// CurveZMQ on any of sluice's ZeroMQ sockets: a channel's, and those of its
// own that are not channels but meet the same peers with the same keys (the
// serving endpoint, a partitioned run's meeting). Internal: io and the
// layers above it.
//
// A server lets in the public keys of an allow-list through the process's
// one ZAP handler (ZeroMQ RFC 27), which answers only sockets made in
// Channel::zmq_context(): a server's socket must be made there. Both ends
// watch their handshakes, so that a peer refused is logged and counted
// where it is refused, and a client names the refusal in the error that
// follows instead of "no receiver answered".

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <sluice/io/channel.h>

namespace zmq {
class context_t;
}

namespace sluice {

// The ZeroMQ context every channel's socket lives in (Channel::zmq_context):
// the ZAP handler answers sockets of this context only.
zmq::context_t& channel_context();

// The handshakes of one socket that failed, read from a socket monitor as
// they happen (by a thread of the process that reads every watch, and logs
// each failure with its reason). Stop it (stop(), or its destruction) on
// the socket's thread while the socket is open: ZeroMQ's I/O thread blocks
// on a monitor nobody reads. Thread safety: failed() and last_reason() any
// thread; stop() and the destructor the socket's.
class HandshakeWatch {
 public:
  // Watches libzmq socket `socket`; `where` names it in the log.
  HandshakeWatch(void* socket, std::string where);
  ~HandshakeWatch();  // stop()
  // Stops watching; the counts stay. Idempotent.
  void stop();
  HandshakeWatch(const HandshakeWatch&) = delete;
  HandshakeWatch& operator=(const HandshakeWatch&) = delete;
  // How many handshakes failed so far.
  uint64_t failed() const;
  // How many of them the peer refused (its key, a plaintext peer, keys that
  // do not agree): what trying again will not mend, unlike a handshake cut
  // off without a reason (a connection dropped in the middle of it).
  uint64_t refused() const;
  // Why the last one failed ("refused: unknown key ...", "refused:
  // plaintext peer ..."); empty while none did.
  std::string last_reason() const;

 private:
  friend class HandshakeReader;
  void read();  // the reader's: takes the monitor's new events

  std::string where_;
  void* socket_ = nullptr;   // watched; null once stopped
  void* monitor_ = nullptr;  // the PAIR the monitor's events come to
  std::atomic<uint64_t> failed_{0}, refused_{0};
  mutable std::mutex mutex_;  // guards last_reason_
  std::string last_reason_;
};

// The server end on `socket`: `secret` this side's secret certificate,
// `allowed` the public certificates of the clients it lets in; every other
// peer, a plaintext one included, is refused at the handshake. WireError
// when a certificate cannot be read.
class CurveServer {
 public:
  CurveServer(void* socket, const std::string& secret, const std::vector<std::string>& allowed,
              const std::string& where);
  ~CurveServer();  // the allow-list leaves the ZAP handler; the watch stops (see HandshakeWatch)
  CurveServer(const CurveServer&) = delete;
  CurveServer& operator=(const CurveServer&) = delete;
  const HandshakeWatch& handshakes() const { return *watch_; }
  // Stops watching the socket's handshakes (HandshakeWatch::stop): on the
  // socket's thread, before it is closed.
  void stop_watching() { watch_->stop(); }

 private:
  std::string domain_;
  std::unique_ptr<HandshakeWatch> watch_;
};

// The regular files in `directory` (CurveOptions::allow): the public
// certificates of the clients to let in. WireError when it cannot be read.
std::vector<std::string> certificates_in(const std::string& directory, const std::string& where);

// The client end on `socket`: options.secret this side's secret
// certificate, options.server the server's public one. WireError when one
// is missing or cannot be read.
void configure_curve_client(void* socket, const CurveOptions& options, const std::string& where);

}  // namespace sluice
