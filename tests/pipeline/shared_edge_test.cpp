// A stage whose outputs leave by reference for another process of this host
// (a ZeroMQ sink on an ipc endpoint, reliable, sharing memory) computes them
// into shared memory, in any pipeline, partitioned or not; its outputs for
// other edges (inproc, a plain channel) stay in ordinary memory. A source
// before such a sink is told to make its tensors there.

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include <sluice/sluice.h>
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

// Sends 20 chunks f32[4096] through `x * 2` to a sink on `endpoint`, which
// the receiving pipeline drains; the second sink on the stage counts the
// chunks already in shared memory (to_pointer in ipc mode that may not copy).
int chunks_computed_in_shared_memory(const std::string& endpoint, ChannelOptions channel) {
  constexpr int kChunks = 20;
  ZmqSourceOptions in_options;
  in_options.channel = channel;
  auto in = sources::zmq("@" + endpoint, {f32({4096})}, in_options);
  ZmqSinkOptions out_options;
  out_options.channel = channel;
  auto out = sinks::zmq(">" + endpoint, out_options);
  Pipeline sending, receiving;
  NodeId chunks = sending.source("chunks", sources::indexed({f32({4096})}, [](uint64_t i) -> std::optional<Tensors> {
    if (i >= kChunks) return std::nullopt;
    return Tensors{tensor(std::vector<float>(4096, static_cast<float>(i)), Shape{4096})};
  }));
  NodeId twice = sending.stage("twice", [](Expr x) { return x * 2.0f; });
  sending.connect(chunks, twice);
  sending.connect(twice, sending.sink("out", out));
  std::atomic<int> shared{0};
  sending.connect(twice, sending.sink("look", [&](const Tensor& t) {
    try {
      t.to_pointer({.mode = PointerMode::Ipc, .require_shared = true});
      ++shared;
    } catch (const Error&) {
      // in ordinary memory
    }
  }));
  std::atomic<int> received{0};
  receiving.connect(receiving.source("in", in), receiving.sink("drop", [&](const Tensor&) { ++received; }));
  receiving.start();
  sending.run();
  receiving.wait();
  EXPECT_EQ(received.load(), kChunks) << endpoint;
  return shared.load();
}

TEST(SharedEdges, AStageBeforeAnIpcSinkComputesIntoSharedMemory) {
  TempDir dir;
  EXPECT_EQ(chunks_computed_in_shared_memory("ipc://" + dir.path() + "/edge", {}), 20);
}

TEST(SharedEdges, OtherEdgesKeepOrdinaryMemory) {
  TempDir dir;
  EXPECT_EQ(chunks_computed_in_shared_memory("inproc://shared-edges-inproc", {}), 0) << "one process: frames lend memory";
  EXPECT_EQ(chunks_computed_in_shared_memory("ipc://" + dir.path() + "/no-sharing", {.shared_memory = false}), 0);
  EXPECT_EQ(chunks_computed_in_shared_memory("ipc://" + dir.path() + "/plain", {.delivery = Delivery::Plain}), 0);
}

// A source whose messages go straight to a sink on `endpoint`: where the
// pipeline told it to make its tensors (Source::output_memory).
OutputMemory memory_a_source_is_told(const std::string& endpoint, ChannelOptions channel) {
  class Told : public Source {
   public:
    std::vector<Spec> spec() const override { return {f32({16})}; }
    void output_memory(OutputMemory memory) override { told = memory; }
    std::optional<Tensors> next() override {
      if (made_++ == 3) return std::nullopt;
      return Tensors{tensor(std::vector<float>(16, 1.0f), Shape{16})};
    }
    OutputMemory told = OutputMemory::Default;

   private:
    int made_ = 0;
  };
  ZmqSourceOptions in_options;
  in_options.channel = channel;
  ZmqSinkOptions out_options;
  out_options.channel = channel;
  auto source = std::make_shared<Told>();
  source->told =
      channel.shared_memory ? OutputMemory::Default : OutputMemory::Shared;  // what a call must change
  Pipeline sending, receiving;
  sending.connect(sending.source("told", source),
                  sending.sink("out", sinks::zmq(">" + endpoint, out_options)));
  receiving.connect(receiving.source("in", sources::zmq("@" + endpoint, {f32({16})}, in_options)),
                    receiving.sink("drop", [](const Tensor&) {}));
  receiving.start();
  sending.run();
  receiving.wait();
  return source->told;
}

TEST(SharedEdges, ASourceBeforeAnIpcSinkIsToldToMakeItsTensorsInSharedMemory) {
  TempDir dir;
  EXPECT_EQ(memory_a_source_is_told("ipc://" + dir.path() + "/edge", {}), OutputMemory::Shared);
  EXPECT_EQ(memory_a_source_is_told("inproc://shared-edges-source", {}), OutputMemory::Default);
  EXPECT_EQ(memory_a_source_is_told("ipc://" + dir.path() + "/no-sharing", {.shared_memory = false}),
            OutputMemory::Default);
}

}  // namespace
}  // namespace sluice
