// The ZeroMQ source and sink as pipeline nodes, inside one process: what
// they send and receive, what a source skips, and how a run ends.

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <numeric>
#include <thread>

#include <tbb/info.h>

#include <zmq.h>

#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/zmq_nodes.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLimit{30000};  // no run in these tests may take longer

TEST(ZmqNodes, SinkSendsEachMessageThenEndOfStream) {
  Channel pull(Pattern::Pull, "@inproc://nodes-sink");
  Pipeline p;
  std::vector<Tensor> values;
  for (int64_t i = 0; i < 20; ++i) values.push_back(tensor<int64_t>({i, -i}));
  auto in = p.source("values", sources::list(values));
  auto out = p.sink("send", sinks::zmq(">inproc://nodes-sink", {.stream_id = 5}));
  p.connect(in, out);
  // The sink's finish waits until the receiver has acknowledged everything:
  // run the pipeline beside the receiving.
  std::thread producer([&p] { p.run(); });
  for (int64_t i = 0; i < 20; ++i) {
    std::optional<wire::Message> m = pull.recv(milliseconds(5000));
    ASSERT_TRUE(m) << "message " << i;
    EXPECT_EQ(m->header.seq, static_cast<uint64_t>(i));
    EXPECT_EQ(m->header.stream_id, 5u);
    EXPECT_EQ(m->tensors.at(0).to_vector<int64_t>(), (std::vector<int64_t>{i, -i}));
  }
  std::optional<wire::Message> end = pull.recv(milliseconds(5000));
  ASSERT_TRUE(end);
  EXPECT_EQ(end->header.kind, wire::Kind::EndOfStream);
  EXPECT_EQ(end->header.seq, 20u) << "end of stream takes the next sequence number";
  // The next recv acknowledges the end of stream; finish() then returns.
  EXPECT_FALSE(pull.recv(milliseconds(200)));
  producer.join();
}

// A reliable sink whose receiver took its messages and finished with none
// fails the run once, within one finish_timeout: whether its end of stream
// found no credit or went out unacknowledged, it does not wait as long
// again. A process told to stop, whose peers stopped too, ends in time.
TEST(ZmqNodes, ASinkWhoseReceiverHoldsEverythingFailsWithinItsFinishTimeout) {
  Channel pull(Pattern::Pull, "@inproc://nodes-no-credit",
               {.credit_messages = 2, .acknowledge = Acknowledge::Checkpoint});
  Pipeline p;
  auto in = p.source("values", sources::list({tensor<int64_t>({1}), tensor<int64_t>({2})}));
  auto out = p.sink("send", sinks::zmq(">inproc://nodes-no-credit", {.finish_timeout = milliseconds(2000)}));
  p.connect(in, out);
  std::string error;
  std::chrono::steady_clock::duration took{};
  std::thread producer([&] {
    const auto start = std::chrono::steady_clock::now();
    try {
      p.run();
    } catch (const PipelineError& e) { error = e.what(); }
    took = std::chrono::steady_clock::now() - start;
  });
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(pull.recv(milliseconds(5000))) << "message " << i;
  producer.join();
  EXPECT_TRUE(error.find("end of stream not sent") != std::string::npos ||
              error.find("not acknowledged within 2000 ms") != std::string::npos)
      << error;
  EXPECT_GE(took, milliseconds(1900));
  EXPECT_LT(took, milliseconds(3500)) << "it waited twice";
}

// A sink with no room to send waits on a thread of its own, not on the
// pipeline's: with more sinks waiting than the pipeline has threads, its
// other paths still run (here a source pushed only once every sink waits). A wait that held
// its thread starved them: across processes, a source another process
// waited for never ran. Cancelled, the waiting sinks let go.
TEST(ZmqNodes, SinksWaitingForRoomLeaveTheirThreadsToThePipelinesOtherWork) {
  const int waiting = std::max(1, tbb::info::default_concurrency()) + 1;
  // Receivers that take nothing: a sender without a word from its receiver
  // sends up to its own credit (1,000 messages), then waits.
  std::vector<std::unique_ptr<Channel>> receivers;
  Pipeline p;
  for (int i = 0; i < waiting; ++i) {
    const std::string endpoint = "inproc://nodes-waiting-" + std::to_string(i);
    receivers.push_back(std::make_unique<Channel>(Pattern::Pull, "@" + endpoint));
    std::vector<Tensor> values(2000, tensor<int64_t>({7}));
    p.connect(p.source("values" + std::to_string(i), sources::list(values)),
              p.sink("send" + std::to_string(i),
                     sinks::zmq(">" + endpoint, {.finish_timeout = milliseconds(1000)})));
  }
  auto push = sources::push({s64({1})});
  std::mutex mutex;
  std::condition_variable arrived;
  int collected = 0;
  p.connect(p.source("pushed", push), p.sink("collect", [&](const Tensors&) {
    std::lock_guard lock(mutex);
    ++collected;
    arrived.notify_all();
  }));
  p.start();
  std::this_thread::sleep_for(milliseconds(1000));  // every sink has sent its credit's worth and waits
  for (int64_t k = 0; k < 20; ++k) push->push(tensor<int64_t>({k}));
  {
    std::unique_lock lock(mutex);
    EXPECT_TRUE(arrived.wait_for(lock, milliseconds(10000), [&] { return collected == 20; }))
        << collected << " of 20 pushed messages through while " << waiting << " sink(s) wait";
  }
  const auto cancelled = std::chrono::steady_clock::now();
  p.cancel();
  push->close();
  EXPECT_THROW(p.wait(), PipelineError);
  // Each sink then waits its finish_timeout for what it sent to be acknowledged.
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled, milliseconds(5000)) << "the waiting sinks let go";
}

// With checkpoints stored, a sink's part of checkpoint n is done once its
// receiver has acknowledged everything up to barrier n (for a receiver
// with Acknowledge::Checkpoint: committed it). Data goes on behind the
// barrier meanwhile: the receiver here takes the barrier and the messages
// after it before it commits anything, and only then does the checkpoint
// complete.
TEST(ZmqNodes, SinkSendsOnWhileABarriersAcknowledgementIsOutstanding) {
  test::TempDir dir;
  Channel pull(Pattern::Pull, "@inproc://nodes-barrier", {.acknowledge = Acknowledge::Checkpoint});
  PipelineOptions options;
  options.checkpoint_dir = dir.path() + "/checkpoints";
  options.checkpoint_interval.messages = 10;
  Pipeline p(options);
  std::vector<Tensor> values;
  for (int64_t i = 0; i < 30; ++i) values.push_back(tensor<int64_t>({i}));
  p.connect(p.source("values", sources::list(values)), p.sink("send", sinks::zmq(">inproc://nodes-barrier")));
  PipelineResult result;
  std::thread producer([&p, &result] { result = p.run(); });
  std::optional<uint64_t> barrier_seq;
  std::vector<wire::Message> after;
  while (after.size() < 5) {
    std::optional<wire::Message> m = pull.recv(milliseconds(5000));
    if (!m) {
      ADD_FAILURE() << (barrier_seq
                            ? "nothing came after the first barrier while it was unacknowledged: the sink "
                              "waited for it"
                            : "no barrier");
      break;
    }
    pull.ack(*m);  // finished with (credit), not committed
    if (m->header.kind == wire::Kind::Barrier && !barrier_seq) {
      barrier_seq = m->header.seq;
    } else if (barrier_seq) {
      after.push_back(*m);
    }
  }
  EXPECT_EQ(p.checkpoint_metrics().completed, 0u)
      << "checkpoint 1 completed before its barrier was committed";
  // Committed: checkpoint 1 completes, and the rest of the run goes through.
  for (;;) {
    if (!after.empty()) pull.commit(after.back().peer, after.back().header.seq);
    std::optional<wire::Message> m = pull.recv(milliseconds(5000));
    ASSERT_TRUE(m) << "the rest of the stream did not come";
    pull.ack(*m);
    after.push_back(*m);
    if (m->header.kind == wire::Kind::EndOfStream) {
      pull.commit(m->peer, m->header.seq);
      pull.keep_alive();
      break;
    }
  }
  producer.join();
  EXPECT_GE(result.checkpoints.completed, 3u) << "checkpoints 1 and 2 and the final one";
}

// A reader slower than the pipeline: the sink keeps finding no room, and
// what would wait goes through its own thread (Sink::waits_for_reader).
// Every message arrives once, in order, with the checkpoints' barriers
// where they fall and the end of stream last, and the run counts them all.
TEST(ZmqNodes, ASlowReadersMessagesArriveEachOnceInOrderThroughTheSinksOwnThread) {
  test::TempDir dir;
  Channel pull(Pattern::Pull, "@inproc://nodes-slow", {.credit_messages = 3});
  PipelineOptions options;
  options.checkpoint_dir = dir.path() + "/checkpoints";
  options.checkpoint_interval.messages = 25;
  Pipeline p(options);
  constexpr int64_t kMessages = 300;
  std::vector<Tensor> values;
  for (int64_t i = 0; i < kMessages; ++i) values.push_back(tensor<int64_t>({i}));
  p.connect(p.source("values", sources::list(values)), p.sink("send", sinks::zmq(">inproc://nodes-slow")));
  PipelineResult result;
  std::thread producer([&p, &result] { result = p.run(); });
  std::vector<int64_t> data;
  size_t barriers = 0;
  bool ended = false;
  while (!ended) {
    std::optional<wire::Message> m = pull.recv(milliseconds(5000));
    ASSERT_TRUE(m) << "the stream stopped after " << data.size() << " message(s)";
    if (m->header.kind == wire::Kind::Barrier) {
      ++barriers;
      EXPECT_EQ(data.size() % 25, 0u) << "barrier " << m->checkpoint << " fell after message " << data.size();
    } else if (m->header.kind == wire::Kind::EndOfStream) {
      ended = true;
    } else {
      data.push_back(m->tensors.at(0).to_vector<int64_t>().at(0));
    }
    if (data.size() % 10 == 0) std::this_thread::sleep_for(milliseconds(1));
  }
  pull.keep_alive();  // the end of stream acknowledged: finish() returns
  producer.join();
  std::vector<int64_t> expected(kMessages);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(data, expected);
  EXPECT_GE(barriers, 10u) << "a barrier every 25 messages";
  EXPECT_EQ(result.metrics_of("send").messages_out, static_cast<uint64_t>(kMessages));
}

TEST(ZmqNodes, SourceEndsAfterEveryExpectedPeerEnded) {
  auto source = sources::zmq("@inproc://nodes-two-peers", {f32({3})}, {.expected_peers = 2});
  Channel a(Pattern::Push, ">inproc://nodes-two-peers"), b(Pattern::Push, ">inproc://nodes-two-peers");
  for (int i = 0; i < 5; ++i) a.send({tensor<float>({1, 2, static_cast<float>(i)})}, static_cast<uint64_t>(i));
  a.send_end_of_stream(5);
  for (int i = 0; i < 3; ++i) b.send({tensor<float>({4, 5, static_cast<float>(i)})}, static_cast<uint64_t>(i));
  b.send_end_of_stream(3);

  Pipeline p;
  auto collect = sinks::collector();
  p.connect(p.source("in", source), p.sink("keep", collect));
  test::Watchdog watchdog(source, kLimit);
  PipelineResult r = p.run();
  EXPECT_FALSE(watchdog.fired()) << "the source did not end by itself";
  EXPECT_EQ(collect->results().size(), 8u) << "5 from one peer and 3 from the other";
  EXPECT_EQ(source->ends_received(), 2u);
  EXPECT_EQ(r.metrics_of("in").messages_out, 8u);
}

TEST(ZmqNodes, SourceSkipsMalformedMismatchedAndErrorMessagesAndGoesOn) {
  auto source = sources::zmq("@inproc://nodes-skip", {s32({2})});
  // The source takes messages once its pipeline runs.
  Pipeline p;
  auto collect = sinks::collector();
  p.connect(p.source("in", source), p.sink("keep", collect));
  p.start();
  Channel push(Pattern::Push, ">inproc://nodes-skip");
  void* raw = zmq_socket(Channel::zmq_context(), ZMQ_PUSH);
  ASSERT_EQ(zmq_connect(raw, "inproc://nodes-skip"), 0);

  // The malformed message comes from a socket of its own, so nothing orders
  // it against the others: the rest is sent once the source has counted it.
  const char bad[] = "SLCE but not a header";
  zmq_send(raw, bad, sizeof bad, 0);
  zmq_close(raw);
  auto deadline = std::chrono::steady_clock::now() + kLimit;
  while (source->rejected() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(1));
  ASSERT_EQ(source->rejected(), 1u) << "the malformed message was not received";
  EXPECT_NE(source->last_rejection().find("inproc://nodes-skip"), std::string::npos)
      << "a rejection names the endpoint: " << source->last_rejection();

  push.send({tensor<int32_t>({1, 2})}, 0);
  push.send({tensor<float>({1, 2})}, 1);                    // f32, not s32
  push.send({tensor<int32_t>({1, 2, 3})}, 2);               // three elements, not two
  push.send_error("producer: sensor 4 unplugged", 3);       // a peer's error
  push.send({tensor<int32_t>({3, 4})}, 4);
  push.send_end_of_stream(5);

  {
    test::Watchdog watchdog(source, kLimit);
    p.wait();
    EXPECT_FALSE(watchdog.fired()) << "the source did not end by itself";
  }
  std::vector<Tensors> got = collect->results();
  ASSERT_EQ(got.size(), 2u) << "only the two s32[2] messages are data";
  EXPECT_EQ(got[0].at(0).to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(got[1].at(0).to_vector<int32_t>(), (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(source->rejected(), 3u) << "one malformed, two of other specs";
  EXPECT_EQ(source->peer_errors(), 1u) << "the error message is counted, not taken for data";
  EXPECT_NE(source->last_rejection().find("expected {s32[2]}"), std::string::npos) << source->last_rejection();
}

TEST(ZmqNodes, ForeverSourceStopsOnCancel) {
  auto source = sources::zmq("@inproc://nodes-forever", {f32({})}, {.expected_peers = 0});
  Channel push(Pattern::Push, ">inproc://nodes-forever");
  Pipeline p;
  auto collect = sinks::collector();
  p.connect(p.source("in", source), p.sink("keep", collect));
  p.start();
  for (int i = 0; i < 3; ++i) push.send({scalar(static_cast<float>(i))}, static_cast<uint64_t>(i));
  push.send_end_of_stream(3);  // ignored: this source receives forever
  auto deadline = std::chrono::steady_clock::now() + milliseconds(5000);
  while (collect->results().size() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(5));
  ASSERT_EQ(collect->results().size(), 3u);

  auto start = std::chrono::steady_clock::now();
  test::Watchdog watchdog(source, milliseconds(10000));
  p.cancel();
  PipelineResult r = p.wait();
  EXPECT_TRUE(r.cancelled);
  EXPECT_FALSE(watchdog.fired()) << "cancel did not reach a source waiting on the network";
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
}

TEST(ZmqNodes, SourceAndSinkConnectTwoPipelinesInOneProcess) {
  auto source = sources::zmq("@tcp://127.0.0.1:*", {f64({4})});
  Pipeline producer, consumer;
  std::vector<Tensor> values;
  for (int i = 0; i < 100; ++i) values.push_back(tensor<double>({1.0 * i, 2.0, 3.0, 4.0}));
  producer.connect(producer.source("values", sources::list(values)),
                   producer.sink("send", sinks::zmq(">" + source->bound_endpoint())));
  auto collect = sinks::collector();
  auto scale = consumer.stage("scale", [](Expr x) { return x * 0.5; }, {.input = {f64({4})}});
  consumer.connect(consumer.source("receive", source), scale);
  consumer.connect(scale, consumer.sink("keep", collect));
  test::Watchdog watchdog(source, kLimit);
  consumer.start();
  producer.run();
  consumer.wait();
  EXPECT_FALSE(watchdog.fired()) << "the end of stream did not end the consumer";
  std::vector<Tensors> got = collect->results();
  ASSERT_EQ(got.size(), 100u);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(got[static_cast<size_t>(i)].at(0).to_vector<double>(), (std::vector<double>{0.5 * i, 1.0, 1.5, 2.0}))
        << "message " << i;
}

TEST(ZmqNodes, WrongPatternsAreRefused) {
  EXPECT_THROW(sources::zmq("@inproc://x1", {f32({})}, {.pattern = Pattern::Push}), PipelineError);
  EXPECT_THROW(sinks::zmq(">inproc://x2", {.pattern = Pattern::Sub}), PipelineError);
  EXPECT_THROW(sources::zmq("@inproc://x3", {}), PipelineError);
}

}  // namespace
}  // namespace sluice
