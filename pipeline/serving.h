#pragma once
// Request/reply serving in front of a pipeline (as Nx.Serving): many
// clients each send single requests over ZeroMQ and each gets its own reply.
//
//   auto server = sluice::serving::endpoint("@tcp://127.0.0.1:5555", {sluice::f32({4})});
//   sluice::Pipeline p;
//   auto model = p.stage("model", [](sluice::Expr x) { return x * 2 + 1; });
//   p.connect(p.source("requests", server->requests()), model);
//   p.connect(model, p.sink("replies", server->replies()));
//   p.start();
//   ...                          // clients: ServingClient(endpoint).call({x}, timeout)
//   server->stop();              // closes the requests: the run ends once they drained
//   p.wait();
//
// A request is a wire-format data message (io/wire.h) sent from a DEALER
// ([wire frames...]) or a REQ socket ([empty][wire frames...]); the reply
// goes back with the same envelope and the request's header seq and stream
// id, so a client matches replies to requests by seq. A malformed request,
// or one whose tensors are not request_spec, gets an error reply (wire kind
// error) saying what was expected and what was found, and never reaches the
// pipeline. Every request that reaches it is answered once: with the
// pipeline's output, or with an error when a stage failed on it (under
// ErrorPolicy::Skip) or the run stopped before it got through.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <sluice/io/channel.h>
#include <sluice/io/wire.h>
#include <sluice/pipeline/sinks.h>
#include <sluice/pipeline/sources.h>

namespace sluice {

class ReplySocket;    // io/detail/request_reply.h
class RequestSocket;  // io/detail/request_reply.h

struct ServingOptions {
  // How often the socket thread, while nothing arrives or the pipeline is
  // full, looks whether it should stop.
  std::chrono::milliseconds poll_interval{20};
  // The most bytes one request's frames may hold together (a channel's
  // default); ZeroMQ disconnects a client sending a larger frame.
  int64_t max_message_bytes = int64_t{1} << 30;
  // How long stop() waits for the requests in the pipeline to be answered
  // before it answers them with an error itself.
  std::chrono::milliseconds drain_timeout{5000};
  // CurveZMQ with the channels' keys (secret and allow, as a receiving
  // channel's): clients whose public certificate is in `allow` only;
  // plaintext and unknown clients are refused at the handshake, logged and
  // counted (ServingMetrics::refused).
  CurveOptions curve{};
};

struct ServingClientOptions {
  // CurveZMQ (secret and server, as a sending channel's): a refusal by the
  // endpoint is named in the error of the call it stalls.
  CurveOptions curve{};
};

// Read at any time; requests == replies + errors + undelivered + in_flight.
struct ServingMetrics {
  uint64_t requests = 0;     // received, well-formed or not
  uint64_t replies = 0;      // data replies sent
  uint64_t errors = 0;       // error replies sent (rejections included)
  uint64_t rejected = 0;     // malformed or of other specs: answered at once, never pushed
  uint64_t undelivered = 0;  // answers ZeroMQ could not hand on (the client gone, or its queue full)
  uint64_t in_flight = 0;    // received and not answered yet
  uint64_t refused = 0;      // clients refused at a CurveZMQ handshake
  // From a request's arrival to the pipeline taking it (queue_wait), and
  // to its answer being sent (latency; requests that reached the pipeline).
  double queue_wait_p50_us = 0, queue_wait_p99_us = 0;
  double latency_p50_us = 0, latency_p99_us = 0;
};

// A ZeroMQ ROUTER socket (without '@' or '>' it binds) whose requests feed a
// pipeline as a PushSource and whose replies come from a Sink. One thread
// of its own, started at construction, does all the socket's I/O; replies
// reach it through a queue. While the pipeline is full it stops reading,
// so ZeroMQ queues and then the clients wait. It serves one pipeline run.
// Thread safety: every member may be called from any thread.
class ServingEndpoint {
 public:
  ServingEndpoint(const std::string& endpoint, std::vector<Spec> request_spec, ServingOptions options = {});
  ~ServingEndpoint();  // stop()
  ServingEndpoint(const ServingEndpoint&) = delete;
  ServingEndpoint& operator=(const ServingEndpoint&) = delete;

  // For Pipeline::source: the well-formed requests in arrival order, which
  // the pipeline numbers 0, 1, 2... (replies() finds its asker by that number).
  std::shared_ptr<PushSource> requests() const { return requests_; }
  // For Pipeline::sink: consume(seq, tensors) replies `tensors` to whoever
  // sent request `seq`. finish() ends nothing for the clients.
  std::shared_ptr<Sink> replies() const { return replies_; }

  // Stops taking requests (later ones get an error reply), closes
  // requests() so that the run ends once it drained, waits up to
  // drain_timeout for what is in the pipeline to be answered, answers the
  // rest with an error, and closes the socket. Idempotent.
  void stop();

  ServingMetrics metrics() const;
  // Why the last request was rejected (empty: none was).
  std::string last_rejection() const;
  // The address bound (tcp://127.0.0.1:54321 when bound to port *).
  std::string bound_endpoint() const { return bound_endpoint_; }

  struct State;  // shared with the sink and the pipeline's callbacks, which may outlive the endpoint

 private:
  void serve();  // the socket thread

  ServingOptions options_;
  std::shared_ptr<State> state_;
  std::shared_ptr<PushSource> requests_;
  std::shared_ptr<Sink> replies_;
  std::string bound_endpoint_;
  std::unique_ptr<ReplySocket> socket_;  // used and closed by the socket thread
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;  // stop() from several threads joins once
  std::thread thread_;
};

// A client of a ServingEndpoint: a DEALER socket (without '@' or '>' it
// connects). Thread safety: one thread at a time (ZeroMQ sockets are not
// thread-safe): give each thread a client of its own.
class ServingClient {
 public:
  explicit ServingClient(const std::string& endpoint, ServingClientOptions options = {});
  ~ServingClient();
  ServingClient(const ServingClient&) = delete;
  ServingClient& operator=(const ServingClient&) = delete;

  // Sends `request` and waits for its reply. PipelineError with the
  // server's text for an error reply, or naming the endpoint and `timeout`
  // when none came; WireError for a malformed reply.
  Tensors call(const Tensors& request, std::chrono::milliseconds timeout);

  // Pipelined use: send returns the request's seq (0, 1, 2...), waiting
  // up to `timeout` for the socket to take it (PipelineError naming the
  // endpoint, and a refusal at the handshake if there was one, when it did
  // not); receive returns the next reply (data or error, its header seq
  // saying which request it answers), or nullopt after `timeout`.
  uint64_t send(const Tensors& request, std::chrono::milliseconds timeout);
  std::optional<wire::Message> receive(std::chrono::milliseconds timeout);

  const std::string& endpoint() const { return endpoint_; }

 private:
  std::string endpoint_;
  std::unique_ptr<RequestSocket> socket_;  // its handshakes: a refusal names the call it stalls
  uint64_t next_seq_ = 0;
};

namespace serving {
// A ServingEndpoint for requests of `request_spec` at `address`.
std::shared_ptr<ServingEndpoint> endpoint(const std::string& address, std::vector<Spec> request_spec,
                                          ServingOptions options = {});
}  // namespace serving

}  // namespace sluice
