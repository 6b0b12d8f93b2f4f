// Live updates over real sockets: an update travels in its stream like
// data (in order on a reliable channel, through plain and pub/sub ones),
// and a reliable receiver refuses what it cannot apply, which its sender
// records before the acknowledgement that covers it. Every wait is bounded.

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>

#include <zmq.h>

#include <sluice/io/channel.h>
#include "tests/io/wire_test_util.h"

namespace sluice {

// How gtest shows a refusal in a failed expectation.
void PrintTo(const Refusal& r, std::ostream* out) { *out << "{" << r.seq << ", \"" << r.why << "\"}"; }

namespace {

using std::chrono::milliseconds;
using test::value_of;
using test::Worker;
constexpr milliseconds kWait = test::kReceiveWait;  // every receive in these tests is bounded
wire::Message next(Channel& in, const std::string& what) { return test::next_message(in, what); }

std::vector<Tensor> weights() { return {tensor<float>({1.5f, -2.0f, 3.25f})}; }

// ---- updates in the stream

TEST(Update, TravelsInOrderBetweenDataOnAReliableChannel) {
  test::TempDir dir;
  Channel in(Pattern::Pull, "@" + dir.ipc("update"));
  Channel out(Pattern::Push, ">" + dir.ipc("update"));
  out.send({scalar(int64_t{10})}, 0, 4);
  out.send_update("scale", weights(), 0, 4);
  out.send({scalar(int64_t{11})}, 0, 4);
  out.send_end_of_stream(0, 4);

  wire::Message m = next(in, "data 0");
  EXPECT_EQ(m.header.kind, wire::Kind::Data);
  EXPECT_EQ(value_of(m), 10);
  m = next(in, "the update");
  EXPECT_EQ(m.header.kind, wire::Kind::Update);
  EXPECT_EQ(m.header.seq, 1u) << "numbered by the channel like any message";
  EXPECT_EQ(m.header.stream_id, 4u);
  EXPECT_EQ(m.target, "scale");
  ASSERT_EQ(m.tensors.size(), 1u);
  EXPECT_TRUE(test::identical(m.tensors[0], weights()[0]));
  EXPECT_NE(m.peer, 0u) << "returned to the owner with its sender, as data is";
  m = next(in, "data 2");
  EXPECT_EQ(value_of(m), 11);
  EXPECT_EQ(m.header.seq, 2u);
  EXPECT_EQ(next(in, "end").header.kind, wire::Kind::EndOfStream);
  EXPECT_FALSE(in.recv(milliseconds(100))) << "nothing after the end (and everything taken is acknowledged)";
  out.flush(kWait);  // the update was acknowledged like the rest
  EXPECT_EQ(in.rejected(), 0u);
  EXPECT_THROW(out.send_update("", weights(), 0, 4), WireError) << "an update names its target";
  EXPECT_THROW(out.send_update("scale", {}, 0, 4), WireError) << "and carries tensors";
  EXPECT_EQ(out.counters().unacknowledged, 0u) << "neither was kept";
}

TEST(Update, ReachesPlainReceiversAndSubscribersOfItsStream) {
  Channel pull(Pattern::Pull, "@inproc://update-plain", {.delivery = Delivery::Plain});
  Channel push(Pattern::Push, ">inproc://update-plain", {.delivery = Delivery::Plain});
  push.send_update("scale", weights(), 8, 2);
  wire::Message m = next(pull, "plain update");
  EXPECT_EQ(m.header.kind, wire::Kind::Update);
  EXPECT_EQ(m.target, "scale");
  EXPECT_EQ(m.header.seq, 8u) << "plain channels send the caller's seq";
  EXPECT_EQ(m.peer, 0u);

  Channel pub(Pattern::Pub, "@inproc://update-pub");
  Channel sub(Pattern::Sub, ">inproc://update-pub", {.subscribe = {7}});
  ASSERT_TRUE(test::await_subscription(pub, sub, 7)) << "the subscription never took effect";
  pub.send_update("other stream's", weights(), 1, 3);  // filtered out
  pub.send_update("scale", weights(), 1, 7);
  do {
    m = next(sub, "subscribed update");
  } while (m.header.kind == wire::Kind::Data);  // probes still in flight
  EXPECT_EQ(m.header.kind, wire::Kind::Update);
  EXPECT_EQ(m.header.stream_id, 7u) << "a subscription takes its stream's updates, not another's";
  EXPECT_EQ(m.target, "scale");
}

// ---- refusals

class RefusedUpdate : public ::testing::TestWithParam<Acknowledge> {};

// A sender sends data, an update the receiver cannot apply, data and the
// end, and flushes on a thread of its own; the receiver refuses the
// update and acknowledges it as usual (OnNextRecv: at the next recv;
// Manual: ack; Checkpoint: ack, then a commit at the end). When flush
// returns, refusals() already holds the refusal: it came before the
// acknowledgement that covers it.
TEST_P(RefusedUpdate, ASenderThatFlushesHasTheRefusalWhenFlushReturns) {
  const Acknowledge mode = GetParam();
  test::TempDir dir;
  Channel in(Pattern::Pull, "@" + dir.ipc("refuse"), {.heartbeat_interval = milliseconds(100), .acknowledge = mode});
  Channel out(Pattern::Push, ">" + dir.ipc("refuse"), {.heartbeat_interval = milliseconds(100)});
  std::vector<Refusal> at_flush;
  Worker sender([&] {
    out.send({scalar(int64_t{0})}, 0, 3);
    out.send_update("no such stage", weights(), 0, 3);
    out.send({scalar(int64_t{2})}, 0, 3);
    out.send_end_of_stream(0, 3);
    out.flush(kWait);
    at_flush = out.refusals();
  });
  for (uint64_t i = 0; i < 4; ++i) {
    wire::Message m = next(in, "message " + std::to_string(i));
    ASSERT_EQ(m.header.seq, i);
    if (m.header.kind == wire::Kind::Update) in.refuse(m, "no stage named 'no such stage'");
    if (mode != Acknowledge::OnNextRecv) in.ack(m);
    if (mode == Acknowledge::Checkpoint && m.header.kind == wire::Kind::EndOfStream) in.commit(m.peer, i);
  }
  EXPECT_FALSE(in.recv(milliseconds(100)));  // sends the last acknowledgements
  EXPECT_EQ(sender.join(), "");
  EXPECT_EQ(at_flush, (std::vector<Refusal>{{1, "no stage named 'no such stage'"}}));
  EXPECT_EQ(out.counters().refusals, 1u);
  EXPECT_EQ(in.counters().refusals, 1u) << "the receiver counts the refusals it made";
  EXPECT_EQ(out.counters().unacknowledged, 0u) << "a refused message is acknowledged all the same";
  EXPECT_EQ(out.rejected(), 0u) << "the refusal was read as one, not skipped as malformed";
}

INSTANTIATE_TEST_SUITE_P(AcknowledgeModes, RefusedUpdate,
                         ::testing::Values(Acknowledge::OnNextRecv, Acknowledge::Manual, Acknowledge::Checkpoint),
                         [](const auto& param_info) {
                           switch (param_info.param) {
                             case Acknowledge::OnNextRecv: return "OnNextRecv";
                             case Acknowledge::Manual: return "Manual";
                             case Acknowledge::Checkpoint: return "Checkpoint";
                           }
                           return "Unknown";
                         });

TEST(Refusal, AnAcceptedUpdateGetsNone) {
  Channel in(Pattern::Pull, "@inproc://refuse-none", {.heartbeat_interval = milliseconds(100)});
  Channel out(Pattern::Push, ">inproc://refuse-none", {.heartbeat_interval = milliseconds(100)});
  out.send_update("scale", weights(), 0);
  out.send_update("shift", weights(), 0);
  EXPECT_EQ(next(in, "the first update").target, "scale");  // applied: not refused
  wire::Message second = next(in, "the second update");
  in.refuse(second, "shift: f32[3] expected, found f32[4]");
  EXPECT_FALSE(in.recv(milliseconds(100)));
  out.flush(kWait);
  EXPECT_EQ(out.refusals(), (std::vector<Refusal>{{1, "shift: f32[3] expected, found f32[4]"}}))
      << "only the refused one: seq 0 has none";
  EXPECT_EQ(out.counters().refusals, 1u);
}

TEST(Refusal, ReasonsAreCutAtACharacterBoundary) {
  Channel in(Pattern::Pull, "@inproc://refuse-long", {.heartbeat_interval = milliseconds(100)});
  Channel out(Pattern::Push, ">inproc://refuse-long", {.heartbeat_interval = milliseconds(100)});
  out.send_update("scale", weights(), 0);
  wire::Message m = next(in, "the update");
  // 1023 bytes, then a 2-byte character across the limit.
  const std::string why = std::string(Channel::kMaxRefusalBytes - 1, 'a') + "\xc3\xa9" + "more";
  in.refuse(m, why);
  EXPECT_FALSE(in.recv(milliseconds(100)));
  out.flush(kWait);
  ASSERT_EQ(out.refusals().size(), 1u);
  EXPECT_EQ(out.refusals()[0].why, std::string(Channel::kMaxRefusalBytes - 1, 'a'))
      << "cut before the character that would not fit whole";
}

TEST(Refusal, NeedsAReliableReceiverAndAMessageItTook) {
  Channel in(Pattern::Pull, "@inproc://refuse-guard", {.heartbeat_interval = milliseconds(100)});
  Channel out(Pattern::Push, ">inproc://refuse-guard", {.heartbeat_interval = milliseconds(100)});
  out.send_update("scale", weights(), 0);
  wire::Message m = next(in, "the update");
  auto refused_because = [&](const wire::Message& message, const std::string& why) -> std::string {
    try {
      in.refuse(message, why);
    } catch (const WireError& e) {
      return e.what();
    }
    return "accepted";
  };
  wire::Message no_peer = m;
  no_peer.peer = 0;
  EXPECT_NE(refused_because(no_peer, "x").find("refuse: seq 0: expected a message recv returned on this channel"),
            std::string::npos);
  wire::Message unknown = m;
  unknown.peer = m.peer + 1;
  EXPECT_NE(refused_because(unknown, "x").find("an unknown sender session"), std::string::npos);
  wire::Message ahead = m;
  ahead.header.seq = 5;
  EXPECT_NE(refused_because(ahead, "x").find("expected a message this channel took (below seq 1"),
            std::string::npos);
  EXPECT_NE(refused_because(m, "bad \xff").find("reason: expected UTF-8 text"), std::string::npos);
  EXPECT_EQ(in.counters().refusals, 0u) << "none of those was sent";

  Channel plain(Pattern::Pull, "@inproc://refuse-plain", {.delivery = Delivery::Plain});
  EXPECT_THROW(plain.refuse(m, "x"), WireError) << "a plain channel has no way back to its sender";
  EXPECT_THROW(out.refuse(m, "x"), WireError) << "a sender refuses nothing";
  EXPECT_TRUE(plain.refusals().empty());
  EXPECT_FALSE(in.recv(milliseconds(100)));
  out.flush(kWait);
  EXPECT_TRUE(out.refusals().empty());
}

// A raw libzmq ROUTER standing in for a reliable receiver: it reads a
// sender's routing id from its first message and writes wire messages to it.
class RawReceiver {
 public:
  explicit RawReceiver(const std::string& endpoint) : socket_(zmq_socket(Channel::zmq_context(), ZMQ_ROUTER)) {
    const int linger = 0, timeout = static_cast<int>(kWait.count());
    zmq_setsockopt(socket_, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(socket_, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    if (zmq_bind(socket_, endpoint.c_str()) != 0) throw std::runtime_error("raw bind to " + endpoint + " failed");
  }
  ~RawReceiver() { zmq_close(socket_); }
  RawReceiver(const RawReceiver&) = delete;
  RawReceiver& operator=(const RawReceiver&) = delete;
  // Waits (up to kWait) for a sender's message and keeps its routing id.
  void meet_sender() {
    zmq_msg_t part;
    zmq_msg_init(&part);
    if (zmq_msg_recv(&part, socket_, 0) < 0) throw std::runtime_error("raw receiver: nothing from the sender in 5 s");
    sender_.assign(static_cast<const char*>(zmq_msg_data(&part)), zmq_msg_size(&part));
    while (zmq_msg_more(&part)) zmq_msg_recv(&part, socket_, 0);  // the rest of that message
    zmq_msg_close(&part);
  }
  void send(const std::vector<std::string>& frames) {
    zmq_send(socket_, sender_.data(), sender_.size(), ZMQ_SNDMORE);
    for (size_t i = 0; i < frames.size(); ++i)
      zmq_send(socket_, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
  }

 private:
  void* socket_;
  std::string sender_;
};

// A receiver's record (credit or ack): header seq is the acknowledgement.
wire::Message record(wire::Kind kind, uint64_t acknowledgement) {
  wire::Message m;
  m.header = {kind, 0, 0, acknowledgement, 0, 0};
  m.control = {.session = 42, .next = acknowledgement, .credit_messages = 1000, .credit_bytes = 1 << 20,
               .max_message_bytes = 1 << 30, .rewind = 0};
  return m;
}

wire::Message refusal(uint64_t seq, const std::string& why) {
  wire::Message m;
  m.header = {wire::Kind::Error, 0, 0, seq, 0, 0};
  m.error = why;
  return m;
}

// A raw libzmq DEALER standing in for a reliable sender of session 7: it
// writes wire messages and reads, in order, what the receiver sends back.
class RawSender {
 public:
  explicit RawSender(const std::string& endpoint) : socket_(zmq_socket(Channel::zmq_context(), ZMQ_DEALER)) {
    const int linger = 0;
    const std::string id = "S\x07\0\0\0\0\0\0\0";  // 'S' and the session, little-endian
    zmq_setsockopt(socket_, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(socket_, ZMQ_ROUTING_ID, id.data(), 9);
    if (zmq_connect(socket_, endpoint.c_str()) != 0) throw std::runtime_error("raw connect to " + endpoint + " failed");
  }
  ~RawSender() { zmq_close(socket_); }
  RawSender(const RawSender&) = delete;
  RawSender& operator=(const RawSender&) = delete;
  void send(const std::vector<std::string>& frames) {
    for (size_t i = 0; i < frames.size(); ++i)
      zmq_send(socket_, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
  }
  // Every message that comes until none has for `quiet`, decoded, in order.
  std::vector<wire::Message> received(milliseconds quiet) {
    std::vector<wire::Message> out;
    zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
    while (zmq_poll(&item, 1, static_cast<long>(quiet.count())) > 0) {
      std::vector<std::string> frames;
      zmq_msg_t part;
      zmq_msg_init(&part);
      do {
        zmq_msg_recv(&part, socket_, 0);
        frames.emplace_back(static_cast<const char*>(zmq_msg_data(&part)), zmq_msg_size(&part));
      } while (zmq_msg_more(&part));
      zmq_msg_close(&part);
      out.push_back(wire::decode(test::received(frames)));
    }
    return out;
  }

 private:
  void* socket_;
};

// The order on the wire: the refusal of seq 0 comes before the first
// record whose acknowledgement covers seq 0, however soon that follows.
TEST(Refusal, GoesOutBeforeTheAcknowledgementThatCoversIt) {
  Channel in(Pattern::Pull, "@inproc://refuse-order", {.heartbeat_interval = milliseconds(100)});
  RawSender sender("inproc://refuse-order");
  wire::Message hello;
  hello.header = {wire::Kind::Heartbeat, 0, 0, 0, 0, 0};
  hello.control = {.session = 7, .next = 0};
  sender.send(test::frames_of(hello));
  wire::Message update;
  update.header = {wire::Kind::Update, 0, 0, 0, 0, 0};
  update.target = "scale";
  update.tensors = weights();
  sender.send(test::frames_of(update));
  wire::Message m = next(in, "the update");
  in.refuse(m, "no");
  EXPECT_FALSE(in.recv(milliseconds(50)));  // acknowledges it once quiet
  std::vector<wire::Message> back = sender.received(milliseconds(200));
  size_t refusal = back.size(), acknowledgement = back.size();
  for (size_t i = 0; i < back.size(); ++i) {
    if (back[i].header.kind == wire::Kind::Error && refusal == back.size()) refusal = i;
    if (wire::is_control(back[i].header.kind) && back[i].header.seq > 0 && acknowledgement == back.size())
      acknowledgement = i;
  }
  ASSERT_LT(acknowledgement, back.size()) << "the update was acknowledged";
  ASSERT_LT(refusal, back.size()) << "and refused";
  EXPECT_LT(refusal, acknowledgement) << "the refusal first";
  EXPECT_EQ(back[refusal].header.seq, 0u);
  EXPECT_EQ(back[refusal].error, "no");
  hello.header.seq = 1;  // confirms the acknowledgement: the receiver closes without waiting for it
  sender.send(test::frames_of(hello));
}

// The receiver grants credit, then refuses a seq the sender never sent
// (stale), seq 0 twice, and sends a refusal that is not UTF-8, then
// acknowledges seq 0. The sender records seq 0 once, ignores the stale
// one, counts the malformed one as rejected, and its flush returns.
TEST(Refusal, StaleRepeatedAndMalformedRefusalsAreHarmless) {
  RawReceiver receiver("inproc://refuse-stale");
  Channel out(Pattern::Push, ">inproc://refuse-stale", {.heartbeat_interval = milliseconds(100)});
  out.send({scalar(int64_t{0})}, 0);
  receiver.meet_sender();
  receiver.send(test::frames_of(record(wire::Kind::Credit, 0)));
  receiver.send(test::frames_of(refusal(99, "stale")));
  receiver.send(test::frames_of(refusal(0, "real")));
  receiver.send(test::frames_of(refusal(0, "again")));
  std::vector<std::string> malformed = test::frames_of(refusal(0, "x"));
  malformed[1] = "\xff";
  receiver.send(malformed);
  receiver.send(test::frames_of(record(wire::Kind::Ack, 1)));
  out.flush(kWait);
  EXPECT_EQ(out.refusals(), (std::vector<Refusal>{{0, "real"}}));
  EXPECT_EQ(out.counters().refusals, 1u);
  EXPECT_EQ(out.rejected(), 1u) << "the refusal that is not UTF-8, skipped";
}

}  // namespace
}  // namespace sluice
