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

// The handshakes of one socket that failed, read from a socket monitor.
// Thread safety: failed() one thread at a time; count() any thread.
class HandshakeWatch {
 public:
  // Watches libzmq socket `socket`; `where` names it in the log.
  HandshakeWatch(void* socket, std::string where);
  ~HandshakeWatch();
  HandshakeWatch(const HandshakeWatch&) = delete;
  HandshakeWatch& operator=(const HandshakeWatch&) = delete;
  // Reads what happened since the last call, logging each failure (warn)
  // with its reason: how many handshakes failed so far.
  uint64_t failed();
  // How many had failed at the last failed(); any thread.
  uint64_t count() const { return failed_.load(); }
  // Why the last one failed ("refused: unknown key ...", "refused:
  // plaintext peer ..."); empty while none did.
  const std::string& last_reason() const { return last_reason_; }

 private:
  std::string where_;
  void* monitor_ = nullptr;
  std::atomic<uint64_t> failed_{0};
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
  ~CurveServer();  // the allow-list leaves the ZAP handler
  CurveServer(const CurveServer&) = delete;
  CurveServer& operator=(const CurveServer&) = delete;
  HandshakeWatch& handshakes() { return *watch_; }

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
