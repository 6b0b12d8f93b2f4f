// Two processes: a producer process (wire_peer) runs a pipeline into a
// ZeroMQ sink; this process's pipeline receives every message, in order,
// bit for bit, over ipc and over tcp loopback.

#include <gtest/gtest.h>

#include <cstring>

#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/zmq_nodes.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

void receive_from_producer_process(const std::string& bind) {
  constexpr uint64_t kCount = 10000;
  auto source = sources::zmq(bind, test::peer_message_spec());
  Pipeline p;
  auto collect = sinks::collector();
  p.connect(p.source("receive", source), p.sink("keep", collect));

  test::Child producer({SLUICE_WIRE_PEER, "produce", source->bound_endpoint(), std::to_string(kCount)});
  {
    test::Watchdog watchdog(source, milliseconds(120000));
    p.run();
    ASSERT_FALSE(watchdog.fired()) << "no end of stream within 120 s; received " << collect->results().size();
  }
  ASSERT_EQ(producer.wait(milliseconds(10000)), 0) << "the producer process failed (its stderr is above)";

  std::vector<Tensors> got = collect->results();
  ASSERT_EQ(got.size(), kCount) << "every message arrives";
  EXPECT_EQ(source->rejected(), 0u);
  for (uint64_t i = 0; i < kCount; ++i) {
    std::vector<Tensor> want = test::peer_message(i);
    ASSERT_EQ(got[i].size(), 2u) << "message " << i;
    ASSERT_EQ(got[i][1].data<int64_t>()[0], static_cast<int64_t>(i)) << "in order";
    ASSERT_TRUE(test::identical(got[i][0], want[0])) << "message " << i << ": f32 bits differ";
  }
}

TEST(TwoProcesses, TenThousandMessagesOverIpc) {
  test::TempDir dir;
  receive_from_producer_process("@" + dir.ipc("two-process"));
}

TEST(TwoProcesses, TenThousandMessagesOverTcpLoopback) { receive_from_producer_process("@tcp://127.0.0.1:*"); }

}  // namespace
}  // namespace sluice
