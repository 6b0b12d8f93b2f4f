// What checkpoints and exactly-once restarts need of channels, over real
// sockets: barriers in the stream, durable acknowledgement (finish, then
// commit) with replay to a receiver that restarts, and streams continued
// across sender sessions. Every wait is bounded.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>

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

TEST(Barrier, TravelsInOrderBetweenDataOnAReliableChannel) {
  test::TempDir dir;
  Channel in(Pattern::Pull, "@" + dir.ipc("barrier"));
  Channel out(Pattern::Push, ">" + dir.ipc("barrier"));
  out.send({scalar(int64_t{10})}, 0, 4);
  out.send_barrier(1, 0, 4);
  out.send({scalar(int64_t{11})}, 0, 4);
  EXPECT_TRUE(out.send_barrier(2, 0, 4, kWait)) << "the timed variant has room";
  out.send_end_of_stream(0, 4);

  wire::Message m = next(in, "data 0");
  EXPECT_EQ(m.header.kind, wire::Kind::Data);
  EXPECT_EQ(value_of(m), 10);
  m = next(in, "barrier 1");
  EXPECT_EQ(m.header.kind, wire::Kind::Barrier);
  EXPECT_EQ(m.checkpoint, 1u);
  EXPECT_EQ(m.header.seq, 1u) << "numbered by the channel like any message";
  EXPECT_EQ(m.header.stream_id, 4u);
  m = next(in, "data 2");
  EXPECT_EQ(value_of(m), 11);
  EXPECT_EQ(m.header.seq, 2u);
  m = next(in, "barrier 2");
  EXPECT_EQ(m.header.kind, wire::Kind::Barrier);
  EXPECT_EQ(m.checkpoint, 2u);
  EXPECT_EQ(next(in, "end").header.kind, wire::Kind::EndOfStream);
  EXPECT_FALSE(in.recv(milliseconds(100))) << "nothing after the end (and everything taken is acknowledged)";
  out.flush(kWait);  // the barriers were acknowledged like the rest
  EXPECT_EQ(in.rejected(), 0u);
}

TEST(Barrier, ReachesPlainReceiversAndSubscribersOfItsStream) {
  Channel pull(Pattern::Pull, "@inproc://barrier-plain", {.delivery = Delivery::Plain});
  Channel push(Pattern::Push, ">inproc://barrier-plain", {.delivery = Delivery::Plain});
  push.send_barrier(5, 8, 2);
  wire::Message m = next(pull, "plain barrier");
  EXPECT_EQ(m.header.kind, wire::Kind::Barrier);
  EXPECT_EQ(m.checkpoint, 5u);
  EXPECT_EQ(m.header.seq, 8u) << "plain channels send the caller's seq";

  Channel pub(Pattern::Pub, "@inproc://barrier-pub");
  Channel sub(Pattern::Sub, ">inproc://barrier-pub", {.subscribe = {7}});
  // A subscription takes a moment to reach the publisher: probe until one arrives.
  auto deadline = std::chrono::steady_clock::now() + kWait;
  std::optional<wire::Message> probe;
  while (!probe && std::chrono::steady_clock::now() < deadline) {
    pub.send({scalar(int64_t{0})}, 0, 7);
    probe = sub.recv(milliseconds(20));
  }
  ASSERT_TRUE(probe) << "the subscription never took effect";
  pub.send_barrier(9, 1, 3);  // another stream: filtered out
  pub.send_barrier(9, 1, 7);
  do {
    m = next(sub, "subscribed barrier");
  } while (m.header.kind == wire::Kind::Data);  // probes still in flight
  EXPECT_EQ(m.header.kind, wire::Kind::Barrier);
  EXPECT_EQ(m.header.stream_id, 7u) << "a subscription takes its stream's barriers, not another's";
  EXPECT_EQ(m.checkpoint, 9u);
}

}  // namespace
}  // namespace sluice
