#include <sluice/pipeline/serving.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <sluice/base/detail/log.h>
#include <sluice/io/channel.h>
#include <sluice/io/detail/request_reply.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/metrics.h>

namespace sluice {

using Clock = std::chrono::steady_clock;

namespace {

// Requests and replies travel as frames: a message naming shared memory
// (references in place of its data) is refused, not mapped.
const wire::MapShared& refuse_shared_memory() {
  static const wire::MapShared refuse = [](const SharedHandle&) -> std::shared_ptr<void> {
    throw WireError(
        "a shared-memory reference, which serving does not take (requests and replies travel as frames)");
  };
  return refuse;
}

constexpr size_t kPackBelow = 4096;   // as a channel's default: small replies travel in one frame
constexpr int kRequestsPerWake = 64;  // read before looking at stop() and the replies again

double micros_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// An endpoint without its '@' or '>', and whether to bind it.
std::pair<std::string, bool> parse_endpoint(const std::string& endpoint, bool bind_by_default,
                                            const std::string& who) {
  if (endpoint.empty() || endpoint == "@" || endpoint == ">")
    throw WireError(error_message(who, "", "an endpoint", fmt::format("'{}'", endpoint)));
  if (endpoint[0] == '@' || endpoint[0] == '>') return {endpoint.substr(1), endpoint[0] == '@'};
  return {endpoint, bind_by_default};
}

// Error text must be UTF-8 on the wire; a request's bytes quoted in it may not be.
std::string utf8_or_ascii(std::string text) {
  if (wire::valid_utf8(wire::Bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size()))) return text;
  for (char& c : text)
    if (static_cast<unsigned char>(c) >= 0x80) c = '?';
  return text;
}

}  // namespace

struct ServingEndpoint::State {
  // Who sent a request: where its answer goes and what it carries.
  struct Asker {
    std::string identity;
    bool req = false;  // a REQ client: an empty delimiter frame comes before the message
    uint64_t seq = 0, stream_id = 0;
    Clock::time_point arrival;
    bool answered = false;
  };
  // An answer for the socket thread to send.
  struct Answer {
    std::string identity;
    bool req = false;
    std::vector<wire::Frame> frames;
    Clock::time_point arrival;
    bool error = false;
    bool reached_pipeline = false;  // its latency counts
  };

  State(std::string w, std::vector<Spec> s) : where(std::move(w)), spec(std::move(s)) {
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) throw PipelineError(error_message(where, fmt::format("eventfd: {}", std::strerror(errno)), "", ""));
  }
  ~State() { ::close(wake_fd); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  Answer error_answer(const Asker& a, const std::string& text, bool reached_pipeline) const {
    wire::Message m;
    m.header.kind = wire::Kind::Error;
    m.header.seq = a.seq;
    m.header.stream_id = a.stream_id;
    m.error = utf8_or_ascii(text);
    return {a.identity, a.req, wire::encode(m), a.arrival, true, reached_pipeline};
  }

  // Hands `answer` to the socket thread.
  void post(Answer answer) {
    std::lock_guard lock(mutex);
    if (closed) {  // the socket is gone
      in_flight.fetch_sub(1);
      undelivered.fetch_add(1);
      return;
    }
    outgoing.push_back(std::move(answer));
    if (outgoing.size() == 1) {
      const uint64_t one = 1;
      [[maybe_unused]] ssize_t n = ::write(wake_fd, &one, sizeof one);
    }
  }

  std::deque<Answer> take_outgoing() {
    std::lock_guard lock(mutex);
    if (outgoing.empty()) return {};
    clear_wake();  // post wrote it for the first of these
    return std::exchange(outgoing, {});
  }

  // With mutex held (or nothing posted since): the wake-up was seen.
  void clear_wake() {
    uint64_t count;
    [[maybe_unused]] ssize_t n = ::read(wake_fd, &count, sizeof count);
  }

  // The pipeline's output for message `index`: the reply to its request.
  void reply(uint64_t index, const Tensors& tensors) {
    Asker a;
    {
      std::lock_guard lock(mutex);
      auto it = askers.find(index);
      if (it == askers.end() || it->second.answered) {
        if (!closed)
          logger().warn("{}: a reply for pipeline message {}, which no request waits for (dropped)", where,
                        index);
        return;
      }
      it->second.answered = true;
      a = it->second;
    }
    wire::Message m;
    m.header.kind = wire::Kind::Data;
    m.header.seq = a.seq;
    m.header.stream_id = a.stream_id;
    m.tensors = tensors;
    try {
      post({a.identity, a.req, wire::encode(m, {.pack_below = kPackBelow}), a.arrival, false, true});
    } catch (const Error& e) {
      post(error_answer(a, fmt::format("{}: request seq {}: reply not encodable: {}", where, a.seq, e.what()),
                        true));
    }
  }

  // The pipeline is done with message `index`: answers its request if nothing did.
  void done(uint64_t index, bool finished) {
    Asker a;
    {
      std::lock_guard lock(mutex);
      auto it = askers.find(index);
      if (it == askers.end()) return;
      a = std::move(it->second);
      askers.erase(it);
    }
    if (a.answered) return;
    const std::string request = fmt::format("request seq {} (pipeline message {})", a.seq, index);
    post(error_answer(a,
                      finished ? where + ": " + request + " failed in the pipeline"
                               : where + ": " + request + ": the pipeline stopped before answering it",
                      true));
  }

  const std::string where;
  const std::vector<Spec> spec;
  int wake_fd = -1;                            // readable while answers wait in `outgoing`
  mutable std::mutex mutex;                    // guards what follows
  std::unordered_map<uint64_t, Asker> askers;  // by pipeline message index
  std::deque<Answer> outgoing;
  bool closed = false;
  std::string last_rejection;
  std::atomic<uint64_t> requests{0}, replies{0}, errors{0}, rejected{0}, undelivered{0}, in_flight{0};
  LatencyHistogram queue_wait, latency;
};

namespace {

class ReplySink : public Sink {
 public:
  explicit ReplySink(std::shared_ptr<ServingEndpoint::State> state) : state_(std::move(state)) {}
  void consume(uint64_t seq, const Tensors& tensors) override { state_->reply(seq, tensors); }

 private:
  std::shared_ptr<ServingEndpoint::State> state_;
};

}  // namespace

ServingEndpoint::ServingEndpoint(const std::string& endpoint, std::vector<Spec> request_spec,
                                 ServingOptions options)
    : options_(options) {
  auto [address, bind] = parse_endpoint(endpoint, true, "serving");
  if (request_spec.empty())
    throw PipelineError(error_message("serving " + address, "", "the spec of its requests", "none"));
  if (options_.poll_interval.count() <= 0 || options_.drain_timeout.count() < 0 ||
      options_.max_message_bytes <= 0)
    throw PipelineError(error_message(
        "serving " + address, "options", "poll_interval > 0, drain_timeout >= 0 and max_message_bytes > 0",
        fmt::format("poll_interval {} ms, drain_timeout {} ms, max_message_bytes {}", options_.poll_interval.count(),
                    options_.drain_timeout.count(), options_.max_message_bytes)));
  if (options_.curve.secret.empty() != options_.curve.allow.empty() || !options_.curve.server.empty())
    throw ConfigError(error_message("serving " + address, "curve", "a secret certificate and an allow directory",
                                    options_.curve.secret.empty() ? "an allow directory and no secret"
                                    : options_.curve.allow.empty() ? "a secret and no allow directory"
                                                                   : "a server certificate (a client's)"));
  // Linger: answers queued when the endpoint stops still reach their clients.
  const std::string where = "serving " + address;
  socket_ = std::make_unique<ReplySocket>(
      address, bind,
      RequestReplyOptions{.max_message_bytes = options_.max_message_bytes, .linger = std::chrono::seconds(1),
                          .where = where},
      options_.curve.secret,
      options_.curve.secret.empty() ? std::vector<std::string>{} : certificates_in(options_.curve.allow, where));
  bound_endpoint_ = socket_->endpoint();
  state_ = std::make_shared<State>("serving " + bound_endpoint_, request_spec);
  requests_ = sources::push(std::move(request_spec));
  replies_ = std::make_shared<ReplySink>(state_);
  thread_ = std::thread([this] { serve(); });
}

ServingEndpoint::~ServingEndpoint() { stop(); }

void ServingEndpoint::stop() {
  std::lock_guard lock(stop_mutex_);
  if (!thread_.joinable()) return;
  stopping_.store(true);
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(state_->wake_fd, &one, sizeof one);
  thread_.join();
}

ServingMetrics ServingEndpoint::metrics() const {
  const State& s = *state_;
  ServingMetrics m;
  m.requests = s.requests.load();
  m.replies = s.replies.load();
  m.errors = s.errors.load();
  m.rejected = s.rejected.load();
  m.undelivered = s.undelivered.load();
  m.in_flight = s.in_flight.load();
  m.queue_wait_p50_us = s.queue_wait.percentile(0.5);
  m.queue_wait_p99_us = s.queue_wait.percentile(0.99);
  m.latency_p50_us = s.latency.percentile(0.5);
  m.latency_p99_us = s.latency.percentile(0.99);
  m.refused = socket_->refused();
  return m;
}

std::string ServingEndpoint::last_rejection() const {
  std::lock_guard lock(state_->mutex);
  return state_->last_rejection;
}

void ServingEndpoint::serve() {
  State& s = *state_;
  ReplySocket& socket = *socket_;
  uint64_t next_index = 0;        // the pipeline's number for the next request pushed
  bool pipeline_stopped = false;  // pushing threw: no run will take requests any more
  std::optional<Clock::time_point> drain_deadline;

  // How an error answer names the request: formatted only for one, not per request.
  auto describe = [&](const State::Asker& a) { return fmt::format("{}: request seq {}", s.where, a.seq); };
  // Counted before the send, so that a client holding its answer sees it counted.
  auto send = [&](State::Answer& a) {
    (a.error ? s.errors : s.replies).fetch_add(1);
    s.in_flight.fetch_sub(1);
    if (a.reached_pipeline) s.latency.record(micros_since(a.arrival));
    if (!socket.answer(a.identity, a.req, a.frames)) {
      logger().debug("{}: an answer not sent to its client: {}", s.where, socket.last_error());
      s.undelivered.fetch_add(1);
      (a.error ? s.errors : s.replies).fetch_sub(1);
    }
  };
  auto flush = [&] {
    for (State::Answer& a : s.take_outgoing()) send(a);
  };
  auto answer_error = [&](const State::Asker& a, const std::string& text, bool reached_pipeline) {
    State::Answer answer = s.error_answer(a, text, reached_pipeline);
    send(answer);
  };
  auto reject = [&](const State::Asker& a, const std::string& why) {
    // Debug, not warn: the client is told, and a bad client must not flood the server's log.
    logger().debug("{} (request rejected)", why);
    {
      std::lock_guard lock(s.mutex);
      s.last_rejection = why;
    }
    s.rejected.fetch_add(1);
    answer_error(a, why, false);
  };

  // Pushes request `m` from `a` into the pipeline, waiting for room in
  // steps and sending replies meanwhile (reading no further requests).
  auto push = [&](const State::Asker& a, const wire::Message& m) {
    const uint64_t index = next_index;
    {
      std::lock_guard lock(s.mutex);
      s.askers[index] = a;  // before the push: the reply may come before push_for returns
    }
    auto forget = [&] {
      std::lock_guard lock(s.mutex);
      s.askers.erase(index);
    };
    std::weak_ptr<State> weak = state_;
    OnDone done = [weak, index](bool finished) {
      if (auto state = weak.lock()) state->done(index, finished);
    };
    for (;;) {
      try {
        if (requests_->push_for(m.tensors, options_.poll_interval, done)) {
          ++next_index;
          s.queue_wait.record(micros_since(a.arrival));
          return;
        }
      } catch (const PipelineError&) {
        pipeline_stopped = true;
        forget();
        return answer_error(a, describe(a) + ": the pipeline has stopped", false);
      }
      flush();
      if (stopping_.load()) {
        forget();
        return answer_error(a, describe(a) + ": the server stopped before the pipeline took it", false);
      }
    }
  };

  auto handle = [&](ReplySocket::Request& r) {
    State::Asker a;
    a.arrival = Clock::now();
    a.identity = std::move(r.asker);
    a.req = r.req;
    std::vector<wire::ReceivedFrame> frames = std::move(r.frames);
    s.requests.fetch_add(1);
    s.in_flight.fetch_add(1);
    // The header's seq and stream id, for the answer, even to a malformed request.
    if (!frames.empty()) {
      try {
        wire::Header h = wire::read_header(frames[0].bytes, s.where, true);
        a.seq = h.seq;
        a.stream_id = h.stream_id;
      } catch (const WireError&) {
        // Left 0: the decode below says what is wrong.
      }
    }
    if (drain_deadline) return answer_error(a, describe(a) + ": the server is stopping", false);
    if (pipeline_stopped) return answer_error(a, describe(a) + ": the pipeline has stopped", false);
    wire::Message m;
    try {
      m = wire::decode(std::move(frames), {.max_message_bytes = options_.max_message_bytes}, s.where,
                       refuse_shared_memory());
    } catch (const WireError& e) { return reject(a, e.what()); }
    if (m.header.kind != wire::Kind::Data)
      return reject(a, describe(a) + ": expected a data message, found kind " +
                           std::string(wire::kind_name(m.header.kind)));
    std::vector<Spec> got;
    for (const Tensor& t : m.tensors) got.push_back(t.spec());
    if (got != s.spec)
      return reject(a, describe(a) + ": expected " + specs_str(s.spec) + ", found " + specs_str(got));
    push(a, m);
  };

  try {
    for (;;) {
      if (stopping_.load() && !drain_deadline) {
        // The run ends once what it holds drained; answers still go out meanwhile.
        requests_->close();
        drain_deadline = Clock::now() + options_.drain_timeout;
      }
      if (drain_deadline && (s.in_flight.load() == 0 || Clock::now() >= *drain_deadline)) break;
      if (socket.wait(options_.poll_interval, s.wake_fd)) {  // answers posted, or stop()
        std::lock_guard lock(s.mutex);
        s.clear_wake();
      }
      flush();
      for (int i = 0; i < kRequestsPerWake; ++i) {
        std::optional<ReplySocket::Request> request = socket.take();
        if (!request) break;
        handle(*request);
        flush();
      }
    }
  } catch (const std::exception& e) {
    logger().error("{}: serving stopped: {}", s.where, e.what());
    requests_->close();
  }
  // Whatever is still unanswered gets an error; later answers are dropped.
  std::deque<State::Answer> left;
  std::vector<State::Asker> unanswered;
  {
    std::lock_guard lock(s.mutex);
    s.closed = true;
    left = std::exchange(s.outgoing, {});
    for (auto& [index, a] : s.askers)
      if (!a.answered) unanswered.push_back(a);
    s.askers.clear();
  }
  for (State::Answer& a : left) send(a);
  for (const State::Asker& a : unanswered)
    answer_error(a,
                 fmt::format("{}: request seq {}", s.where, a.seq) +
                     ": the server stopped before the pipeline "
                     "answered it",
                 true);
  socket.close();  // on this thread (HandshakeWatch)
}

ServingClient::ServingClient(const std::string& endpoint, ServingClientOptions options) {
  auto [address, bind] = parse_endpoint(endpoint, false, "serving client");
  endpoint_ = address;
  const CurveOptions& curve = options.curve;
  if (curve.secret.empty() != curve.server.empty() || !curve.allow.empty())
    throw ConfigError(error_message("serving client " + address, "curve",
                                    "a secret certificate and the server's public one",
                                    curve.secret.empty() ? "a server certificate and no secret"
                                    : curve.server.empty() ? "a secret and no server certificate"
                                                           : "an allow directory (a server's)"));
  // Linger 0: a client that is gone wants no replies.
  socket_ = std::make_unique<RequestSocket>(address, bind, RequestReplyOptions{.where = "serving client " + address},
                                            curve);
  endpoint_ = socket_->endpoint();
}

ServingClient::~ServingClient() = default;

uint64_t ServingClient::send(const Tensors& request, std::chrono::milliseconds timeout) {
  wire::Message m;
  m.header.kind = wire::Kind::Data;
  m.header.seq = next_seq_;
  m.tensors = request;
  const RequestSocket::Sent sent = socket_->send(wire::encode(m, {.pack_below = kPackBelow}), timeout);
  if (sent != RequestSocket::Sent::Yes) {
    const std::string who = fmt::format("serving client {}: request seq {}", endpoint_, next_seq_);
    if (sent == RequestSocket::Sent::Failed)
      throw WireError(error_message(who, "send failed: " + socket_->last_error(), "", ""));
    throw PipelineError(
        error_message(who, "", fmt::format("a server taking it within {} ms", timeout.count()),
                      socket_->handshakes().failed() > 0
                          ? "none: the endpoint " + socket_->handshakes().last_reason() + " at the handshake"
                          : std::string("none connected")));
  }
  return next_seq_++;
}

std::optional<wire::Message> ServingClient::receive(std::chrono::milliseconds timeout) {
  std::optional<std::vector<wire::ReceivedFrame>> frames = socket_->receive(timeout);
  if (!frames) return std::nullopt;
  return wire::decode(std::move(*frames), {}, "serving client " + endpoint_, refuse_shared_memory());
}

Tensors ServingClient::call(const Tensors& request, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const uint64_t seq = send(request, timeout);
  const std::string who = fmt::format("serving client {}: request seq {}", endpoint_, seq);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    std::optional<wire::Message> m = receive(std::max(left, std::chrono::milliseconds(0)));
    if (!m)
      throw PipelineError(error_message(
          who, "", fmt::format("a reply within {} ms", timeout.count()),
          socket_->handshakes().failed() > 0
              ? "none: the endpoint " + socket_->handshakes().last_reason() + " at the handshake"
                                    : std::string("none")));
    if (m->header.seq != seq) continue;  // a late reply to an earlier request
    if (m->header.kind == wire::Kind::Error) throw PipelineError(error_message(who, "error reply: " + m->error, "", ""));
    if (m->header.kind != wire::Kind::Data)
      throw WireError(error_message(who, "", "a data or error reply",
                                    fmt::format("kind {}", wire::kind_name(m->header.kind))));
    return std::move(m->tensors);
  }
}

namespace serving {
std::shared_ptr<ServingEndpoint> endpoint(const std::string& address, std::vector<Spec> request_spec,
                                          ServingOptions options) {
  return std::make_shared<ServingEndpoint>(address, std::move(request_spec), options);
}
}  // namespace serving

}  // namespace sluice
