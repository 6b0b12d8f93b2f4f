// A live update across processes: `sluice update` (a process of its own)
// swaps the weights of a stage whose pipeline receives over ZeroMQ. The
// swap happens at a barrier, every message is processed once, by the old
// weights before it and the new ones from it on; an update whose specs do
// not fit is refused, `sluice update` says why and exits 1, and nothing
// changes.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include <sluice/io/npy.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/zmq_nodes.h>
#include "tests/io/wire_test_util.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;
constexpr uint64_t kMessages = 600, kEvery = 50, kUpdateAfter = 200;

// Runs `sluice update ...`; its exit status and what it printed.
std::pair<int, std::string> sluice_update(const std::string& args) {
  std::string out;
  FILE* p = popen((std::string(SLUICE_CLI) + " update " + args + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(LiveUpdateAcrossProcesses, SluiceUpdateSwapsAStagesWeightsAtABarrierOrSaysWhyNot) {
  test::TempDir dir;
  const std::string endpoint = dir.ipc("stage");
  PipelineOptions options;
  options.checkpoint_interval.messages = kEvery;  // this pipeline's own barriers
  Pipeline p(options);
  auto in = sources::zmq("@" + endpoint, {s64({}), f32({})});
  // count: acc counts the messages it has seen; the update restarts it at 1000.
  NodeId count = p.stage("count", [](Expr i, Expr x, Expr acc) { return tuple(i, x, acc, acc + 1.0f); },
                         {.acc = {scalar(0.0f)}});
  std::vector<float> before(kMessages, -1);
  std::vector<int> times(kMessages, 0);
  p.connect(p.source("in", in), count);
  p.connect(count, p.sink("out", [&](const Tensors& t) {
    const auto i = static_cast<size_t>(t.at(0).to_vector<int64_t>()[0]);
    before[i] = t.at(2).to_vector<float>()[0];
    ++times[i];
  }));
  p.start();

  Channel out(Pattern::Push, ">" + endpoint);
  auto send = [&](uint64_t from, uint64_t to) {
    for (uint64_t i = from; i < to; ++i)
      out.send({scalar(static_cast<int64_t>(i)), scalar(static_cast<float>(i))}, i);
  };
  send(0, kUpdateAfter);
  out.flush(milliseconds(10000));  // all taken: the update comes after message kUpdateAfter - 1

  const std::string weights = dir.path() + "/weights.npy", wrong = dir.path() + "/wrong.npy";
  npy::save(weights, scalar(1000.0f));
  npy::save(wrong, tensor<double>({1, 2}));
  auto [refused, refusal] = sluice_update(endpoint + " count " + wrong + " --timeout 10");
  EXPECT_EQ(refused, 1) << refusal;
  EXPECT_NE(refusal.find("refused the update of stage 'count'"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("expected an accumulator {f32}, found {f64[2]}"), std::string::npos) << refusal;
  auto [unknown, unknown_text] = sluice_update(endpoint + " nothing " + weights + " --timeout 10");
  EXPECT_EQ(unknown, 1) << unknown_text;
  auto [taken, taken_text] = sluice_update(endpoint + " count " + weights + " --timeout 10");
  EXPECT_EQ(taken, 0) << taken_text;

  send(kUpdateAfter, kMessages);
  out.send_end_of_stream(kMessages);
  out.flush(milliseconds(10000));
  PipelineResult r = p.wait();

  uint64_t boundary = 0;
  for (uint64_t i = 0; i < kMessages; ++i) {
    ASSERT_EQ(times[i], 1) << "message " << i;
    if (boundary == 0 && before[i] >= 1000) boundary = i;
  }
  ASSERT_GE(boundary, kUpdateAfter) << "the update took effect before it was sent";
  EXPECT_EQ(boundary % kEvery, 0u) << "the swap happened off a barrier, at message " << boundary;
  for (uint64_t i = 0; i < kMessages; ++i) {
    const float want = i < boundary ? static_cast<float>(i) : 1000.0f + static_cast<float>(i - boundary);
    ASSERT_EQ(before[i], want) << "message " << i;
  }
  EXPECT_EQ(r.accumulators.at("count")[0].to_vector<float>()[0],
            1000.0f + static_cast<float>(kMessages - boundary));
}

}  // namespace
}  // namespace sluice
