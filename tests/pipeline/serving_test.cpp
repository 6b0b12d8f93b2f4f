// Request/reply serving in front of a pipeline (pipeline/serving.h): many
// clients each get their own answers, REQ and DEALER clients, requests
// rejected with a reason, requests a stage fails on or a cancelled run
// drops, stopping, and a Python client.

#include <sluice/pipeline/serving.h>

#include <gtest/gtest.h>
#include <zmq.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <sluice/io/channel.h>
#include <sluice/io/curve.h>
#include <sluice/pipeline/pipeline.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kCallTimeout{20000};
constexpr milliseconds kRunLimit{60000};

Tensors request_of(double v) { return {tensor<double>({v, -v})}; }
std::vector<double> answer_to(double v) { return {2 * v + 1, -2 * v + 1}; }
std::vector<double> values(const Tensors& t) { return t.at(0).to_vector<double>(); }

// requests (f64[2]) -> x * 2 + 1 -> replies.
std::shared_ptr<ServingEndpoint> affine_server(Pipeline& p, ServingOptions options = {}) {
  auto server = serving::endpoint("@tcp://127.0.0.1:*", {f64({2})}, options);
  auto affine = p.stage("affine", [](Expr x) { return x * 2 + 1; }, {.concurrency = 2});
  p.connect(p.source("requests", server->requests()), affine);
  p.connect(affine, p.sink("replies", server->replies()));
  return server;
}

// The same, with the requests joined (by message number) to `flags`, f32[]
// by its spec: a flag of another dtype makes the stage fail on that message.
std::shared_ptr<ServingEndpoint> flagged_server(Pipeline& p, std::shared_ptr<Source> flags,
                                                ServingOptions options = {}) {
  auto server = serving::endpoint("@tcp://127.0.0.1:*", {f64({2})}, options);
  auto affine = p.stage("affine", [](Expr x, Expr) { return x * 2 + 1; });
  p.connect(p.source("requests", server->requests()), affine);
  p.connect(p.source("flags", std::move(flags)), affine);
  p.connect(affine, p.sink("replies", server->replies()));
  return server;
}

// Cancels a run still going after `limit`, so that a failing test ends instead of hanging.
class RunLimit {
 public:
  RunLimit(Pipeline& p, milliseconds limit)
      : thread_([this, &p, limit] {
          std::unique_lock lock(mutex_);
          if (!dismissed_cv_.wait_for(lock, limit, [this] { return dismissed_; })) {
            fired_.store(true);
            p.cancel();
          }
        }) {}
  ~RunLimit() { dismiss(); }
  RunLimit(const RunLimit&) = delete;
  RunLimit& operator=(const RunLimit&) = delete;
  void dismiss() {
    {
      std::lock_guard lock(mutex_);
      dismissed_ = true;
    }
    dismissed_cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  bool fired() const { return fired_.load(); }

 private:
  std::mutex mutex_;
  std::condition_variable dismissed_cv_;
  bool dismissed_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

// Waits (at most 10 s) until `done` holds.
template <typename F>
bool eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// A flags source whose message `hold` waits until open() or end() (at most
// 20 s); end() makes it the last. Message i < count is f32[] 0 otherwise.
class Gate {
 public:
  std::shared_ptr<Source> source(uint64_t hold, uint64_t count) {
    return sources::indexed({f32()}, [this, hold, count](uint64_t i) -> std::optional<Tensors> {
      if (i == hold) {
        std::unique_lock lock(mutex_);
        cv_.wait_for(lock, std::chrono::seconds(20), [this] { return open_ || ended_; });
        if (ended_) return std::nullopt;
      }
      if (i >= count) return std::nullopt;
      return Tensors{scalar(0.0f)};
    });
  }
  void open() { set(open_); }
  void end() { set(ended_); }

 private:
  void set(bool& flag) {
    {
      std::lock_guard lock(mutex_);
      flag = true;
    }
    cv_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false, ended_ = false;
};

// A raw ZeroMQ socket connected to `endpoint`, for clients ServingClient is not (REQ, malformed senders).
class RawSocket {
 public:
  RawSocket(int type, const std::string& endpoint) : socket_(zmq_socket(Channel::zmq_context(), type)) {
    const int linger = 0;
    zmq_setsockopt(socket_, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(socket_, endpoint.c_str()) != 0)
      throw std::runtime_error("connect " + endpoint + " failed");
  }
  ~RawSocket() { zmq_close(socket_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;
  void send(const std::vector<std::string>& frames) {
    for (size_t i = 0; i < frames.size(); ++i)
      if (zmq_send(socket_, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0) < 0)
        throw std::runtime_error("send failed");
  }
  // The next message, which must come within kCallTimeout.
  wire::Message receive() {
    zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, kCallTimeout.count()) <= 0)
      throw std::runtime_error("no reply within the timeout");
    std::vector<std::string> frames;
    int more = 1;
    while (more) {
      zmq_msg_t part;
      zmq_msg_init(&part);
      if (zmq_msg_recv(&part, socket_, 0) < 0) throw std::runtime_error("receive failed");
      frames.emplace_back(static_cast<const char*>(zmq_msg_data(&part)), zmq_msg_size(&part));
      more = zmq_msg_more(&part);
      zmq_msg_close(&part);
    }
    return wire::decode(test::received(frames));
  }

 private:
  void* socket_;
};

TEST(Serving, ManyClientsEachGetTheirOwnAnswers) {
  constexpr int kClients = 32, kRequests = 50;
  Pipeline p;
  auto server = affine_server(p);
  p.start();
  RunLimit limit(p, kRunLimit);
  std::atomic<int> wrong{0};
  {
    std::vector<std::unique_ptr<test::Worker>> clients;
    for (int c = 0; c < kClients; ++c)
      clients.push_back(std::make_unique<test::Worker>([&, c] {
        ServingClient client(server->bound_endpoint());
        for (int i = 0; i < kRequests; ++i) {
          const double v = c * 1000 + i + 0.25;
          if (values(client.call(request_of(v), kCallTimeout)) != answer_to(v)) wrong.fetch_add(1);
        }
      }));
    for (int c = 0; c < kClients; ++c)
      EXPECT_EQ(clients[static_cast<size_t>(c)]->join(), "") << "client " << c;
  }
  EXPECT_EQ(wrong.load(), 0) << "answers that were not the client's own";

  ServingMetrics m = server->metrics();
  EXPECT_EQ(m.requests, 1600u);
  EXPECT_EQ(m.replies, 1600u);
  EXPECT_EQ(m.errors, 0u);
  EXPECT_EQ(m.rejected, 0u);
  EXPECT_EQ(m.undelivered, 0u);
  EXPECT_EQ(m.in_flight, 0u);
  EXPECT_GT(m.latency_p50_us, 0);
  EXPECT_GE(m.latency_p99_us, m.latency_p50_us);
  EXPECT_GT(m.queue_wait_p50_us, 0);
  EXPECT_GE(m.queue_wait_p99_us, m.queue_wait_p50_us);
  EXPECT_LE(m.queue_wait_p50_us, m.latency_p50_us);

  server->stop();
  PipelineResult r = p.wait();
  EXPECT_FALSE(limit.fired());
  EXPECT_EQ(r.metrics_of("affine").messages_out, 1600u);
}

// CurveZMQ with the channels' keys: an allowed client is served; a
// plaintext client and one with an unknown key are refused at the
// handshake, counted, and each call says so instead of only timing out.
// (The endpoint once offered no CurveZMQ at all.)
TEST(Serving, CurveZMQLetsInTheAllowedClientsOnly) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() + "/allow");
  curve::save(dir.path() + "/server", curve::generate());
  curve::save(dir.path() + "/allow/client", curve::generate());
  curve::save(dir.path() + "/stranger", curve::generate());
  Pipeline p;
  auto server = affine_server(p, {.curve = {.secret = dir.path() + "/server_secret", .allow = dir.path() + "/allow"}});
  p.start();
  RunLimit limit(p, kRunLimit);
  ServingClient allowed(server->bound_endpoint(),
                        {.curve = {.secret = dir.path() + "/allow/client_secret", .server = dir.path() + "/server"}});
  EXPECT_EQ(values(allowed.call(request_of(1.5), kCallTimeout)), answer_to(1.5));
  for (const auto& [name, options] :
       {std::pair{std::string("plaintext"), ServingClientOptions{}},
        std::pair{std::string("unknown key"),
                  ServingClientOptions{.curve = {.secret = dir.path() + "/stranger_secret",
                                                 .server = dir.path() + "/server"}}}}) {
    ServingClient client(server->bound_endpoint(), options);
    try {
      client.call(request_of(2.5), milliseconds(2000));
      ADD_FAILURE() << "a " << name << " client was answered";
    } catch (const PipelineError& e) {
      EXPECT_NE(std::string(e.what()).find("refused: " + name), std::string::npos) << e.what();
    }
  }
  EXPECT_GE(server->metrics().refused, 2u);
  EXPECT_EQ(server->metrics().requests, 1u) << "a refused client's request reached the endpoint";
  EXPECT_THROW(serving::endpoint("@tcp://127.0.0.1:*", {f64({2})}, {.curve = {.allow = dir.path() + "/allow"}}),
               ConfigError)
      << "an allow-list without a secret would serve plaintext";
  server->stop();
  p.wait();
  EXPECT_FALSE(limit.fired());
}

TEST(Serving, ReqAndDealerClientsAreBothServed) {
  Pipeline p;
  auto server = affine_server(p);
  p.start();
  RunLimit limit(p, kRunLimit);

  // REQ: its envelope has an empty delimiter; the reply keeps seq and stream id.
  RawSocket req(ZMQ_REQ, server->bound_endpoint());
  for (uint64_t k = 0; k < 3; ++k) {
    req.send(test::frames_of(test::data_message(request_of(1.5 + k), 70 + k, 3)));
    wire::Message reply = req.receive();
    ASSERT_EQ(reply.header.kind, wire::Kind::Data) << reply.error;
    EXPECT_EQ(reply.header.seq, 70 + k);
    EXPECT_EQ(reply.header.stream_id, 3u);
    EXPECT_EQ(values(reply.tensors), answer_to(1.5 + k));
  }

  // DEALER, pipelined: several requests out, replies matched by seq.
  ServingClient dealer(server->bound_endpoint());
  std::map<uint64_t, double> asked;
  for (int k = 0; k < 5; ++k) asked[dealer.send(request_of(-k - 0.5), kCallTimeout)] = -k - 0.5;
  EXPECT_EQ(asked.size(), 5u) << "each request its own seq";
  for (int k = 0; k < 5; ++k) {
    std::optional<wire::Message> reply = dealer.receive(kCallTimeout);
    ASSERT_TRUE(reply) << "reply " << k;
    ASSERT_EQ(reply->header.kind, wire::Kind::Data) << reply->error;
    auto it = asked.find(reply->header.seq);
    ASSERT_NE(it, asked.end()) << "a reply to seq " << reply->header.seq << ", not asked or answered twice";
    EXPECT_EQ(values(reply->tensors), answer_to(it->second));
    asked.erase(it);
  }
  EXPECT_FALSE(dealer.receive(milliseconds(100))) << "one reply per request";
  EXPECT_EQ(server->metrics().replies, 8u);

  server->stop();
  p.wait();
  EXPECT_FALSE(limit.fired());
}

TEST(Serving, RejectedRequestsGetErrorRepliesAndServingGoesOn) {
  Pipeline p;
  auto server = affine_server(p);
  p.start();
  RunLimit limit(p, kRunLimit);

  uint64_t rejected = 0;
  RawSocket raw(ZMQ_DEALER, server->bound_endpoint());
  for (const test::Malformed& bad : test::malformed_messages()) {
    // An empty first frame reads as a REQ client's delimiter.
    if (bad.frames.empty() || bad.frames[0].empty()) continue;
    raw.send(bad.frames);
    wire::Message reply = raw.receive();
    ASSERT_EQ(reply.header.kind, wire::Kind::Error) << bad.name;
    EXPECT_NE(reply.error.find("serving " + server->bound_endpoint()), std::string::npos) << reply.error;
    EXPECT_NE(reply.error.find(bad.reason), std::string::npos) << bad.name << ": " << reply.error;
    ++rejected;
  }
  wire::Message end;
  end.header.kind = wire::Kind::EndOfStream;
  end.header.seq = 9;
  raw.send(test::frames_of(end));
  wire::Message reply = raw.receive();
  ASSERT_EQ(reply.header.kind, wire::Kind::Error);
  EXPECT_EQ(reply.header.seq, 9u);
  EXPECT_NE(reply.error.find("request seq 9: expected a data message, found kind end of stream"),
            std::string::npos)
      << reply.error;
  ++rejected;
  // A request naming shared memory (references, not the data) is refused,
  // not mapped: requests travel as frames.
  raw.send(test::frames_of(test::data_message(request_of(5), 10), {.shared = true}));
  reply = raw.receive();
  ASSERT_EQ(reply.header.kind, wire::Kind::Error);
  EXPECT_NE(reply.error.find("a shared-memory reference, which serving does not take"), std::string::npos)
      << reply.error;
  ++rejected;

  ServingClient client(server->bound_endpoint());
  try {
    client.call({scalar<int64_t>(3)}, kCallTimeout);
    ADD_FAILURE() << "a request of the wrong spec was answered";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("request seq 0: expected {f64[2]}, found {s64}"), std::string::npos)
        << e.what();
  }
  ++rejected;
  EXPECT_EQ(values(client.call(request_of(4), kCallTimeout)), answer_to(4)) << "still serving";

  ServingMetrics m = server->metrics();
  EXPECT_GT(rejected, 25u);
  EXPECT_EQ(m.rejected, rejected);
  EXPECT_EQ(m.errors, rejected);
  EXPECT_EQ(m.replies, 1u);
  EXPECT_EQ(m.requests, rejected + 1);
  EXPECT_EQ(m.in_flight, 0u);
  EXPECT_NE(server->last_rejection().find("found {s64}"), std::string::npos) << server->last_rejection();

  server->stop();
  PipelineResult r = p.wait();
  EXPECT_FALSE(limit.fired());
  EXPECT_EQ(r.metrics_of("affine").messages_in, 1u) << "no rejected request reached the pipeline";
}

TEST(Serving, RequestsAStageFailsOnGetErrorReplies) {
  constexpr uint64_t kRequests = 8;
  const std::set<uint64_t> failing = {2, 5};
  Pipeline p({.on_error = ErrorPolicy::Skip});
  auto flags = sources::indexed({f32()}, [&failing](uint64_t i) -> std::optional<Tensors> {
    if (i >= kRequests) return std::nullopt;
    if (failing.count(i)) return Tensors{scalar<int64_t>(0)};  // not the f32[] the stage takes
    return Tensors{scalar(0.0f)};
  });
  auto server = flagged_server(p, flags);
  p.start();
  RunLimit limit(p, kRunLimit);

  // One request at a time, so that request i is pipeline message i.
  std::vector<std::unique_ptr<ServingClient>> clients;
  for (int c = 0; c < 3; ++c) clients.push_back(std::make_unique<ServingClient>(server->bound_endpoint()));
  for (uint64_t i = 0; i < kRequests; ++i) {
    ServingClient& client = *clients[i % 3];
    const double v = static_cast<double>(i) + 0.5;
    if (!failing.count(i)) {
      EXPECT_EQ(values(client.call(request_of(v), kCallTimeout)), answer_to(v)) << "request " << i;
      continue;
    }
    try {
      client.call(request_of(v), kCallTimeout);
      ADD_FAILURE() << "request " << i << " was answered though the stage failed on it";
    } catch (const PipelineError& e) {
      EXPECT_NE(
          std::string(e.what()).find("(pipeline message " + std::to_string(i) + ") failed in the pipeline"),
          std::string::npos)
          << e.what();
    }
  }
  ServingMetrics m = server->metrics();
  EXPECT_EQ(m.replies, kRequests - failing.size());
  EXPECT_EQ(m.errors, failing.size());
  EXPECT_EQ(m.rejected, 0u);

  server->stop();
  PipelineResult r = p.wait();
  EXPECT_FALSE(limit.fired());
  EXPECT_EQ(r.metrics_of("affine").errors, failing.size());
}

TEST(Serving, StoppingEndsTheRunAfterAnsweringWhatItHolds) {
  Gate gate;
  Pipeline p;
  auto server = flagged_server(p, gate.source(1, 2), {.drain_timeout = milliseconds(20000)});
  p.start();
  RunLimit limit(p, kRunLimit);
  ServingClient first(server->bound_endpoint());
  EXPECT_EQ(values(first.call(request_of(1), kCallTimeout)), answer_to(1));

  // Request 1 waits in the pipeline for its flag while stop() is called.
  test::Worker second([&] {
    ServingClient client(server->bound_endpoint());
    if (values(client.call(request_of(2), kCallTimeout)) != answer_to(2))
      throw std::runtime_error("wrong answer");
  });
  ASSERT_TRUE(eventually([&] { return server->metrics().requests == 2; }));
  std::this_thread::sleep_for(milliseconds(200));  // pushed: it waits at the join
  test::Worker opener([&] {
    std::this_thread::sleep_for(milliseconds(300));
    gate.open();
  });
  const auto stop_began = std::chrono::steady_clock::now();
  server->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_began, std::chrono::seconds(15))
      << "stop() waits for the answer, not for the drain timeout";
  EXPECT_EQ(second.join(), "");
  EXPECT_EQ(opener.join(), "");
  PipelineResult r = p.wait();  // the requests were closed: the run ends
  EXPECT_FALSE(limit.fired());
  EXPECT_FALSE(r.cancelled);
  EXPECT_EQ(r.metrics_of("affine").messages_out, 2u);
  ServingMetrics m = server->metrics();
  EXPECT_EQ(m.replies, 2u);
  EXPECT_EQ(m.in_flight, 0u);
  server->stop();  // again: nothing

  // Nobody answers any more: the client's timeout names the endpoint and the time.
  ServingClient late(server->bound_endpoint());
  try {
    late.call(request_of(3), milliseconds(300));
    ADD_FAILURE() << "a stopped endpoint answered";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find(server->bound_endpoint()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("within 300 ms"), std::string::npos) << e.what();
  }
}

TEST(Serving, ACancelledRunAnswersWhatItDroppedAndWhatComesAfter) {
  Gate gate;
  auto p = std::make_unique<Pipeline>();
  auto server = flagged_server(*p, gate.source(1, 2));
  p->start();
  ServingClient first(server->bound_endpoint());
  EXPECT_EQ(values(first.call(request_of(1), kCallTimeout)), answer_to(1));

  std::string dropped_error;
  test::Worker second([&] {
    ServingClient client(server->bound_endpoint());
    try {
      client.call(request_of(2), kCallTimeout);
    } catch (const PipelineError& e) { dropped_error = e.what(); }
  });
  ASSERT_TRUE(eventually([&] { return server->metrics().requests == 2; }));
  std::this_thread::sleep_for(milliseconds(200));  // pushed: it waits at the join
  p->cancel();
  gate.end();
  EXPECT_TRUE(p->wait().cancelled);
  p.reset();  // whatever the run still held is let go
  EXPECT_EQ(second.join(), "");
  EXPECT_NE(
      dropped_error.find("request seq 0 (pipeline message 1): the pipeline stopped before answering it"),
      std::string::npos)
      << dropped_error;

  try {
    first.call(request_of(3), kCallTimeout);
    ADD_FAILURE() << "answered with no pipeline running";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("request seq 1: the pipeline has stopped"), std::string::npos)
        << e.what();
  }
  ServingMetrics m = server->metrics();
  EXPECT_EQ(m.requests, 3u);
  EXPECT_EQ(m.replies, 1u);
  EXPECT_EQ(m.errors, 2u);
  EXPECT_EQ(m.in_flight, 0u);
}

TEST(Serving, PythonClient) {
  const std::string python = test::python_with_numpy_and_zmq();
  if (python.empty())
    GTEST_SKIP() << "no python3 with numpy and zmq (tried /usr/bin/python3 and python3 on PATH)";
  constexpr int kCount = 40;
  Pipeline p;
  auto server = affine_server(p);
  p.start();
  RunLimit limit(p, kRunLimit);
  test::Child client({python, SLUICE_SOURCE_DIR "/tests/pipeline/serving_client.py", server->bound_endpoint(),
                      std::to_string(kCount)},
                     {"PYTHONPATH=" SLUICE_SOURCE_DIR "/python"});
  EXPECT_EQ(client.wait(milliseconds(60000)), 0) << "the Python client failed (its stderr is above)";
  ServingMetrics m = server->metrics();
  EXPECT_EQ(m.replies, static_cast<uint64_t>(kCount) + 5) << "its calls, then 5 pipelined requests";
  EXPECT_EQ(m.rejected, 1u) << "its request of the wrong spec";
  server->stop();
  p.wait();
  EXPECT_FALSE(limit.fired());
}

}  // namespace
}  // namespace sluice
