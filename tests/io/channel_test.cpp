// Channels over real sockets: inproc, ipc and tcp on 127.0.0.1; every
// pattern; malformed messages rejected while the next valid one arrives.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <zmq.hpp>

#include <sluice/io/channel.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kWait{5000};  // every receive in these tests is bounded

class ChannelOver : public ::testing::TestWithParam<std::string> {
 protected:
  std::string bind_address() {
    const std::string& t = GetParam();
    // Names unique in the process: a closed socket's name is released
    // asynchronously, after the next test may have started.
    static int counter = 0;
    if (t == "inproc") return "@inproc://channel-test-" + std::to_string(counter++);
    if (t == "ipc") return "@" + dir_.ipc("channel-" + std::to_string(counter++));
    return "@tcp://127.0.0.1:*";
  }
  // A bound receiver and a sender connected to it.
  std::pair<Channel, Channel> pair_of(Pattern receiver, Pattern sender, ChannelOptions receive_options = {}) {
    Channel r(receiver, bind_address(), std::move(receive_options));
    Channel s(sender, ">" + r.bound_endpoint());
    return {std::move(r), std::move(s)};
  }

  test::TempDir dir_;
};

TEST_P(ChannelOver, PushPullRoundTripsEveryDtypeAndRank) {
  auto [pull, push] = pair_of(Pattern::Pull, Pattern::Push);
  std::vector<Spec> specs = test::round_trip_specs();
  for (size_t i = 0; i < specs.size(); ++i)
    push.send({test::random_tensor(specs[i], static_cast<uint32_t>(i))}, i, 4);
  push.send_end_of_stream(specs.size(), 4);
  for (size_t i = 0; i < specs.size(); ++i) {
    std::optional<wire::Message> m = pull.recv(kWait);
    ASSERT_TRUE(m) << "message " << i << " (" << specs[i].str() << ") did not arrive within 5 s";
    EXPECT_EQ(m->header.seq, i) << "in order";
    EXPECT_EQ(m->header.stream_id, 4u);
    ASSERT_EQ(m->tensors.size(), 1u);
    EXPECT_TRUE(test::identical(m->tensors[0], test::random_tensor(specs[i], static_cast<uint32_t>(i))))
        << specs[i].str() << ": bytes differ";
  }
  std::optional<wire::Message> end = pull.recv(kWait);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->header.kind, wire::Kind::EndOfStream);
  EXPECT_EQ(pull.rejected(), 0u);
}

TEST_P(ChannelOver, LargeTensorsWithACrcArriveIntact) {
  ChannelOptions with_crc{.crc = true};
  Channel pull(Pattern::Pull, bind_address());
  Channel push(Pattern::Push, ">" + pull.bound_endpoint(), with_crc);
  Tensor big = test::random_tensor(f32({3, 1 << 18}), 11);  // 3 MiB
  push.send({big, test::random_tensor(c128({7}), 12)}, 0);
  std::optional<wire::Message> m = pull.recv(kWait);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->header.flags, wire::kFlagCrc);
  ASSERT_EQ(m->tensors.size(), 2u);
  EXPECT_TRUE(test::identical(m->tensors[0], big));
  EXPECT_TRUE(test::identical(m->tensors[1], test::random_tensor(c128({7}), 12)));
}

// A raw ZeroMQ push socket on the channels' context: it sends whatever
// bytes a test gives it, so that it also reaches inproc endpoints.
class RawPush {
 public:
  explicit RawPush(const std::string& endpoint) : socket_(zmq_socket(Channel::zmq_context(), ZMQ_PUSH)) {
    int linger = 0;
    zmq_setsockopt(socket_, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(socket_, endpoint.c_str()) != 0) throw std::runtime_error("raw connect to " + endpoint + " failed");
  }
  ~RawPush() { zmq_close(socket_); }
  RawPush(const RawPush&) = delete;
  RawPush& operator=(const RawPush&) = delete;
  void send(const std::vector<std::string>& frames) {
    for (size_t i = 0; i < frames.size(); ++i)
      zmq_send(socket_, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
  }

 private:
  void* socket_;
};

// A raw libzmq PUSH speaks plain ZeroMQ: the receiving channel must too.
TEST_P(ChannelOver, RejectsEveryMalformedMessageAndReceivesTheNextValidOne) {
  Channel pull(Pattern::Pull, bind_address(), {.delivery = Delivery::Plain});
  RawPush raw(pull.bound_endpoint());
  uint64_t seq = 1000;
  for (const test::Malformed& bad : test::malformed_messages()) {
    uint64_t before = pull.rejected();
    raw.send(bad.frames);
    Tensor t = test::random_tensor(s32({3}), static_cast<uint32_t>(seq));
    raw.send(test::frames_of(test::data_message({t}, ++seq)));
    std::optional<wire::Message> m = pull.recv(kWait);
    ASSERT_TRUE(m) << bad.name << ": the valid message after it did not arrive";
    EXPECT_EQ(m->header.seq, seq) << bad.name << ": the malformed message was taken for the valid one";
    EXPECT_TRUE(test::identical(m->tensors.at(0), t)) << bad.name;
    EXPECT_EQ(pull.rejected(), before + 1) << bad.name << ": counted once";
    EXPECT_NE(pull.last_rejection().find(bad.reason), std::string::npos)
        << bad.name << ": expected the reason to mention '" << bad.reason << "', found: " << pull.last_rejection();
    EXPECT_NE(pull.last_rejection().find(pull.endpoint()), std::string::npos) << "names the endpoint";
  }
}

TEST_P(ChannelOver, MessagesAboveTheLimitAreDroppedAndTheNextOneArrives) {
  Channel pull(Pattern::Pull, bind_address(), {.delivery = Delivery::Plain, .max_message_bytes = 4096});
  RawPush raw(pull.bound_endpoint());
  // Frames each under the limit, together above it: dropped as they arrive, counted.
  std::vector<std::string> frames =
      test::frames_of(test::data_message({test::random_tensor(u8({3000}), 1), test::random_tensor(u8({3000}), 2)}, 1));
  raw.send(frames);
  Tensor small = test::random_tensor(u8({100}), 3);
  raw.send(test::frames_of(test::data_message({small}, 2)));
  std::optional<wire::Message> m = pull.recv(kWait);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->header.seq, 2u);
  EXPECT_EQ(pull.rejected(), 1u);
  EXPECT_NE(pull.last_rejection().find("max_message_bytes = 4096"), std::string::npos) << pull.last_rejection();

  // One frame above the limit: over ipc and tcp ZeroMQ drops the connection
  // before buffering it (the sender reconnects); inproc hands it over and the
  // channel rejects it. Either way the next message arrives.
  raw.send(test::frames_of(test::data_message({test::random_tensor(u8({8000}), 4)}, 3)));
  // What was queued on the dropped connection is lost with it: resend until
  // one arrives.
  auto deadline = std::chrono::steady_clock::now() + kWait;
  m.reset();
  for (uint64_t seq = 4; !m && std::chrono::steady_clock::now() < deadline; ++seq) {
    raw.send(test::frames_of(test::data_message({small}, seq)));
    m = pull.recv(milliseconds(50));
  }
  ASSERT_TRUE(m) << "no message arrived after an oversized frame";
  EXPECT_GE(m->header.seq, 4u) << "the oversized message was not delivered";
  EXPECT_TRUE(test::identical(m->tensors.at(0), small));
}

TEST_P(ChannelOver, PubSubDeliversOnlyTheSubscribedStreams) {
  Channel pub(Pattern::Pub, bind_address());
  Channel sub(Pattern::Sub, ">" + pub.bound_endpoint(), {.subscribe = {7}});
  // A subscription takes a moment to reach the publisher: probe until one arrives.
  Tensor probe = test::random_tensor(f32({1}), 1);
  auto deadline = std::chrono::steady_clock::now() + kWait;
  std::optional<wire::Message> m;
  while (!m && std::chrono::steady_clock::now() < deadline) {
    pub.send({probe}, 0, 7);
    m = sub.recv(milliseconds(20));
  }
  ASSERT_TRUE(m) << "the subscription never took effect";
  pub.send({test::random_tensor(f32({2}), 2)}, 1, 3);
  pub.send({test::random_tensor(f32({2}), 3)}, 2, 7);
  pub.send_end_of_stream(3, 7);
  do {
    m = sub.recv(kWait);
    ASSERT_TRUE(m);
  } while (m->header.seq == 0);  // probes still in flight
  EXPECT_EQ(m->header.stream_id, 7u) << "stream 3 was not subscribed";
  EXPECT_EQ(m->header.seq, 2u);
  EXPECT_TRUE(test::identical(m->tensors.at(0), test::random_tensor(f32({2}), 3)));
  m = sub.recv(kWait);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->header.kind, wire::Kind::EndOfStream) << "end of stream reaches subscribers of its stream";
}

TEST_P(ChannelOver, PairSendsBothWays) {
  Channel a(Pattern::Pair, bind_address());
  Channel b(Pattern::Pair, ">" + a.bound_endpoint());
  a.send({test::random_tensor(s64({2}), 1)}, 0);
  b.send({test::random_tensor(s64({3}), 2)}, 0);
  std::optional<wire::Message> at_b = b.recv(kWait), at_a = a.recv(kWait);
  ASSERT_TRUE(at_a && at_b);
  EXPECT_TRUE(test::identical(at_b->tensors.at(0), test::random_tensor(s64({2}), 1)));
  EXPECT_TRUE(test::identical(at_a->tensors.at(0), test::random_tensor(s64({3}), 2)));
}

TEST_P(ChannelOver, ErrorMessagesArriveAsErrorsNotData) {
  auto [pull, push] = pair_of(Pattern::Pull, Pattern::Push);
  push.send_error("stage 'scale' failed on message 3", 3);
  std::optional<wire::Message> m = pull.recv(kWait);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->header.kind, wire::Kind::Error);
  EXPECT_EQ(m->error, "stage 'scale' failed on message 3");
  EXPECT_TRUE(m->tensors.empty());
}

INSTANTIATE_TEST_SUITE_P(Transports, ChannelOver, ::testing::Values("inproc", "ipc", "tcp"),
                         [](const auto& param_info) { return param_info.param; });

TEST(Channel, InprocSharesTheSendersMemory) {
  Channel pull(Pattern::Pull, "@inproc://zero-copy");
  Channel push(Pattern::Push, ">inproc://zero-copy");
  Tensor big = test::random_tensor(f32({1 << 16}), 5);
  push.send({big}, 0);
  std::optional<wire::Message> m = pull.recv(kWait);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tensors.at(0).host_data(), big.host_data())
      << "neither side copied: the sender lent its buffer and the receiver wrapped the frame";
}

TEST(Channel, ReceiveAndSendTimeOut) {
  Channel pull(Pattern::Pull, "@inproc://quiet");
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(pull.recv(milliseconds(50))) << "nothing was sent";
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));

  // A plain push socket with no peer has no room.
  Channel push(Pattern::Push, "@inproc://nobody-listens", {.delivery = Delivery::Plain, .linger = milliseconds(0)});
  wire::Message m = test::data_message({test::random_tensor(f32({1}), 1)}, 0);
  EXPECT_FALSE(push.send(m, milliseconds(50)));

  // A reliable one keeps up to its own credit for a receiver to come, then has no room.
  Channel keeper(Pattern::Push, "@inproc://nobody-listens-reliable", {.linger = milliseconds(0), .credit_messages = 2});
  EXPECT_TRUE(keeper.send(m, milliseconds(50)));
  EXPECT_TRUE(keeper.send(m, milliseconds(50)));
  EXPECT_FALSE(keeper.send(m, milliseconds(50))) << "a third message is beyond the sender's credit";
  EXPECT_EQ(keeper.counters().unacknowledged, 2u);
  EXPECT_THROW(keeper.flush(milliseconds(100)), WireError) << "nothing was acknowledged";
}

TEST(Channel, BadEndpointsAreWireErrors) {
  EXPECT_THROW(Channel(Pattern::Pull, ""), WireError);
  EXPECT_THROW(Channel(Pattern::Pull, "@nonsense://x"), WireError);
  EXPECT_THROW(Channel(Pattern::Pull, "@tcp://127.0.0.1:*", {.max_message_bytes = 0}), WireError);
  EXPECT_THROW(Channel(Pattern::Pull, "@tcp://127.0.0.1:70000"), WireError) << "ZeroMQ would bind port 4464";
  EXPECT_THROW(Channel(Pattern::Pull, "@tcp://127.0.0.1:0"), WireError);
  EXPECT_THROW(Channel(Pattern::Push, "@tcp://127.0.0.1:*", {.credit_messages = 0}), WireError);
}

TEST(Channel, AnIpcPathALiveChannelHoldsIsNotTakenOver) {
  test::TempDir dir;
  Channel first(Pattern::Pull, "@" + dir.ipc("held"));
  try {
    Channel second(Pattern::Pull, "@" + dir.ipc("held"));
    FAIL() << "a second bind took the path over";
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find("live process"), std::string::npos) << e.what();
  }
}

TEST(Channel, AReliableSenderRefusesAMessageAboveTheReceiversLimitNamingBothSizes) {
  Channel pull(Pattern::Pull, "@inproc://reliable-limit", {.max_message_bytes = 4096});
  Channel push(Pattern::Push, ">inproc://reliable-limit");
  // It grants credit, announcing its limit, and acknowledges at its next recv.
  std::thread receiver([&pull] {
    EXPECT_TRUE(pull.recv(kWait));
    pull.recv(milliseconds(300));
  });
  push.send({test::random_tensor(u8({10}), 1)}, 0);
  receiver.join();
  push.flush(kWait);
  try {
    push.send({test::random_tensor(u8({8000}), 2)}, 1);
    FAIL() << "a message above the receiver's limit was accepted";
  } catch (const WireError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("4096"), std::string::npos) << what;
    EXPECT_NE(what.find("8"), std::string::npos) << what;
  }
}

TEST(Channel, ReliableDeliveryKeepsOrderAndCountsNothingLost) {
  Channel pull(Pattern::Pull, "@inproc://reliable-order", {.credit_messages = 16});
  Channel push(Pattern::Push, ">inproc://reliable-order", {.credit_messages = 16});
  constexpr uint64_t kCount = 500;
  std::thread sender([&push] {
    for (uint64_t i = 0; i < kCount; ++i) push.send({scalar(static_cast<int64_t>(i))}, i, 3);
    push.send_end_of_stream(kCount, 3);
    push.flush(kWait);
  });
  for (uint64_t i = 0; i < kCount; ++i) {
    std::optional<wire::Message> m = pull.recv(kWait);
    ASSERT_TRUE(m) << "message " << i;
    EXPECT_EQ(m->tensors.at(0).to_vector<int64_t>()[0], static_cast<int64_t>(i)) << "in order";
    EXPECT_EQ(m->header.stream_id, 3u);
    EXPECT_EQ(m->header.flags & wire::kFlagPacked, wire::kFlagPacked) << "small messages travel packed";
  }
  std::optional<wire::Message> end = pull.recv(kWait);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->header.kind, wire::Kind::EndOfStream);
  EXPECT_FALSE(pull.recv(milliseconds(100))) << "nothing after the end";
  sender.join();
  EXPECT_EQ(push.counters().unacknowledged, 0u);
  EXPECT_EQ(pull.counters().duplicates, 0u);
}

// A receiver that grants more credit than its sender keeps acknowledges in
// batches of an eighth of the sender's (its heartbeats say it): in batches
// of its own, the sender would fill up first and wait for the receiver's
// socket to go quiet. Here the receiver never goes quiet: it takes the 16
// messages the sender keeps and stops; the 17th goes only if acknowledgements
// went while it took them.
TEST(Channel, AReceiverGrantingMoreThanItsSenderKeepsAcknowledgesInTheSendersBatches) {
  Channel pull(Pattern::Pull, "@inproc://reliable-credits", {.credit_messages = 8000});
  Channel push(Pattern::Push, ">inproc://reliable-credits", {.credit_messages = 16});
  std::atomic<bool> seventeenth{false}, done{false};
  std::thread sender([&] {
    for (uint64_t i = 0; i < 16; ++i) push.send({scalar(static_cast<int64_t>(i))}, i);
    wire::Message m;
    m.header = {wire::Kind::Data, 0, 0, 16, 0, 0};
    m.tensors = {scalar(int64_t{16})};
    seventeenth = push.send(m, milliseconds(3000));
    done = true;
  });
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(pull.recv(kWait)) << "message " << i;
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(4000);
  while (!done && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(milliseconds(1));
  EXPECT_TRUE(seventeenth)
      << "the sender waited for acknowledgements that a receiver still taking never sent";
  sender.join();
  std::optional<wire::Message> last = pull.recv(kWait);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->tensors.at(0).to_vector<int64_t>()[0], 16);
  EXPECT_FALSE(pull.recv(milliseconds(20))) << "nothing more; the last is acknowledged";
  push.flush(kWait);
}

// A receiver closing asks each sender it heard from to confirm its last
// acknowledgements, waiting up to its linger time. A sender that closed
// with everything acknowledged said so as it went: the receiver closes at
// once rather than wait its linger out for a sender that is gone.
TEST(Channel, AReceiverClosesAtOnceAfterItsSenderClosedWithEverythingAcknowledged) {
  auto pull = std::make_unique<Channel>(Pattern::Pull, "@inproc://closes-at-once",
                                        ChannelOptions{.linger = milliseconds(10000)});
  {
    Channel push(Pattern::Push, ">inproc://closes-at-once");
    push.send({scalar<int64_t>(7)}, 0);
    push.send_end_of_stream(1);
    ASSERT_TRUE(pull->recv(kWait));
    ASSERT_TRUE(pull->recv(kWait));
    pull->keep_alive();  // the end of stream acknowledged
    push.flush(kWait);
  }
  const auto start = std::chrono::steady_clock::now();
  pull.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000))
      << "the receiver waited its linger time for a sender that had gone";
}

}  // namespace
}  // namespace sluice
