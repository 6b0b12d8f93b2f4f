#pragma once
// Channel: a ZeroMQ socket that sends or receives wire-format messages.
//
// An endpoint is a ZeroMQ address (tcp://host:port, ipc:///path,
// inproc://name); a leading '@' binds and a leading '>' connects (CZMQ's
// convention); without one, a receiving socket (pull, sub, pair) binds and a
// sending one (push, pub) connects.
//
// Thread safety: a Channel is used by one thread at a time (ZeroMQ sockets
// are not thread-safe); different Channels may be used concurrently.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/wire.h"

namespace sluice {

enum class Pattern : uint8_t { Push, Pull, Pub, Sub, Pair };

struct ChannelOptions {
  int send_high_water_mark = 1000;  // messages queued per peer before send blocks (push, pair) or drops (pub)
  int recv_high_water_mark = 1000;
  // The most bytes one message's frames may hold together. A larger message
  // is rejected: a peer sending a larger frame is disconnected by ZeroMQ
  // before the frame is buffered, and a message whose frames add up to more
  // is dropped frame by frame as it arrives.
  int64_t max_message_bytes = int64_t{1} << 30;
  bool crc = false;                  // send a CRC-32C of the data frames
  std::vector<uint64_t> subscribe;   // sub: stream ids to receive; empty: all
  std::chrono::milliseconds linger{2000};  // how long close waits for unsent messages
};

class Channel {
 public:
  Channel(Pattern pattern, const std::string& endpoint, ChannelOptions options = {});
  ~Channel();
  Channel(Channel&&) noexcept;
  Channel& operator=(Channel&&) noexcept;

  // Sends one message, blocking while the peers' queues are full (push,
  // pair). Tensors' data is not copied: ZeroMQ holds each buffer until it is
  // on the wire. WireError when the message cannot be encoded or sent.
  void send(const wire::Message& message);
  // The same, waiting at most `timeout` for room: false (nothing sent) when
  // there was none. A message is sent whole or not at all.
  bool send(const wire::Message& message, std::chrono::milliseconds timeout);
  void send(const std::vector<Tensor>& tensors, uint64_t seq, uint64_t stream_id = 0);
  void send_end_of_stream(uint64_t seq, uint64_t stream_id = 0);
  void send_error(const std::string& what, uint64_t seq, uint64_t stream_id = 0);

  // The next well-formed message (data, end of stream or error), waiting up
  // to `timeout` (negative: forever); nullopt on timeout. A malformed message
  // is counted, logged (warn) with the endpoint and the reason, and skipped.
  std::optional<wire::Message> recv(std::chrono::milliseconds timeout = std::chrono::milliseconds(-1));

  uint64_t rejected() const;                  // malformed messages skipped so far
  const std::string& last_rejection() const;  // the reason for the last one
  // The address without '@' or '>'; for a binding channel, the one bound.
  const std::string& endpoint() const;
  // The address actually bound (tcp://127.0.0.1:54321 when bound to port *).
  std::string bound_endpoint() const;

  // The ZeroMQ context (libzmq's void*) every Channel's socket lives in:
  // raw ZeroMQ sockets made on it reach channels' inproc:// endpoints.
  static void* zmq_context();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
