// Live updates over real sockets: an update travels in its stream like
// data (in order on a reliable channel, through plain and pub/sub ones).
// Every wait is bounded.

#include <gtest/gtest.h>

#include <string>

#include "io/channel.h"
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kWait{5000};  // every receive in these tests is bounded

// The next message, which must come within kWait.
wire::Message next(Channel& in, const std::string& what) {
  std::optional<wire::Message> m = in.recv(kWait);
  if (!m) throw std::runtime_error(what + ": nothing within 5 s");
  return *m;
}

int64_t value_of(const wire::Message& m) { return m.tensors.at(0).to_vector<int64_t>().at(0); }

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
  // A subscription takes a moment to reach the publisher: probe until one arrives.
  auto deadline = std::chrono::steady_clock::now() + kWait;
  std::optional<wire::Message> probe;
  while (!probe && std::chrono::steady_clock::now() < deadline) {
    pub.send({scalar(int64_t{0})}, 0, 7);
    probe = sub.recv(milliseconds(20));
  }
  ASSERT_TRUE(probe) << "the subscription never took effect";
  pub.send_update("other stream's", weights(), 1, 3);  // filtered out
  pub.send_update("scale", weights(), 1, 7);
  do {
    m = next(sub, "subscribed update");
  } while (m.header.kind == wire::Kind::Data);  // probes still in flight
  EXPECT_EQ(m.header.kind, wire::Kind::Update);
  EXPECT_EQ(m.header.stream_id, 7u) << "a subscription takes its stream's updates, not another's";
  EXPECT_EQ(m.target, "scale");
}

}  // namespace
}  // namespace sluice
