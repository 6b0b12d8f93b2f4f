// Partitioned pipelines (PartitionOptions): one program, each process
// building its own part; here the processes are threads of this test, each
// with its own Pipeline, joined by real ipc channels. The same program as
// separate processes, under mpirun and across network namespaces, is
// partition_mpirun_test.sh and partition_netns_test.sh.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <thread>

#include "tests/pipeline/partitioned_pipeline.h"
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing::partitioned_pipeline;
using testing::result_bytes;

constexpr int64_t kMessages = 300;

PipelineOptions in_process(const std::string& me, const Placement& placement) {
  PipelineOptions o;
  o.capacity = 8;
  o.partition = {.process = me,
                 .placement = placement,
                 .meet_timeout = std::chrono::seconds(20),
                 .peer_timeout = std::chrono::seconds(20)};
  return o;
}

// Runs process `me` of the program; what "results" took when it runs there.
std::string run_process(const std::string& me, const Placement& placement, int64_t width = 64) {
  auto built = partitioned_pipeline(in_process(me, placement), kMessages, width);
  built.pipeline->run();
  return result_bytes(*built.results);
}

TEST(Partition, ThreeProcessesGiveTheOneProcessResultsBitForBit) {
  auto whole = partitioned_pipeline({}, kMessages);
  whole.pipeline->run();
  const std::string expected = result_bytes(*whole.results);
  ASSERT_EQ(whole.results->results().size(), static_cast<size_t>(kMessages));

  TempDir dir;
  Placement placement = local_placement({"a", "b", "c"}, dir.path());
  auto a = std::async(std::launch::async, [&] { return run_process("a", placement); });
  auto b = std::async(std::launch::async, [&] { return run_process("b", placement); });
  std::string got = run_process("c", placement);
  EXPECT_TRUE(a.get().empty());
  EXPECT_TRUE(b.get().empty());
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "the partitioned results differ from the one-process ones";
}

TEST(Partition, EachProcessRunsItsNodesAndTheEdgesToTheOthers) {
  TempDir dir;
  Placement placement = local_placement({"a", "b", "c"}, dir.path());
  std::vector<std::vector<NodeMetrics>> metrics(3);
  std::vector<std::thread> threads;
  for (int k = 0; k < 3; ++k)
    threads.emplace_back([&, k] {
      auto built =
          partitioned_pipeline(in_process(std::string(1, static_cast<char>('a' + k)), placement), 20);
      metrics[static_cast<size_t>(k)] = built.pipeline->run().metrics;
    });
  for (auto& t : threads) t.join();
  auto names = [](const std::vector<NodeMetrics>& ms) {
    std::vector<std::string> n;
    for (const NodeMetrics& m : ms) n.push_back(m.name);
    std::sort(n.begin(), n.end());
    return n;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(names(metrics[0]), (Names{"numbers", "numbers->joined", "numbers->running"}));
  EXPECT_EQ(names(metrics[1]), (Names{"mix", "mix->joined", "numbers->running", "running"}));
  EXPECT_EQ(names(metrics[2]), (Names{"joined", "mix->joined", "numbers->joined", "results"}));
  for (const auto& ms : metrics)
    for (const NodeMetrics& m : ms) EXPECT_EQ(m.messages_in, 20u) << m.name;
}

TEST(Partition, AnotherBuildOfTheProgramFailsAtStartInEveryProcess) {
  TempDir dir;
  Placement placement = local_placement({"a", "b", "c"}, dir.path());
  auto fails = [&](const std::string& me, int64_t width) {
    return std::async(std::launch::async, [&placement, me, width]() -> std::string {
      try {
        run_process(me, placement, width);
      } catch (const PipelineError& e) { return e.what(); }
      return "no error";
    });
  };
  auto a = fails("a", 64), b = fails("b", 32), c = fails("c", 64);
  for (auto* f : {&a, &b, &c}) {
    ASSERT_EQ(f->wait_for(std::chrono::seconds(60)), std::future_status::ready);
    std::string what = f->get();
    EXPECT_THAT(what, HasSubstr("process 'b' runs another pipeline than process 'a'"));
    EXPECT_THAT(what, HasSubstr("f32[32]"));
  }
}

TEST(Partition, APlacementThatDoesNotFitThePipelineFailsNamingIt) {
  TempDir dir;
  auto error_of = [](PipelineOptions o) -> std::string {
    try {
      partitioned_pipeline(std::move(o), 10).pipeline->run();
    } catch (const PipelineError& e) { return e.what(); }
    return "no error";
  };
  // A process of the pipeline the placement lacks.
  EXPECT_THAT(error_of(in_process("a", local_placement({"a", "b"}, dir.path()))),
              HasSubstr("runs in process 'c', which the placement from default does not have"));
  // A process of the placement with nothing to run.
  EXPECT_THAT(
      error_of(in_process("a", local_placement({"a", "b", "c", "d"}, dir.path()))),
      HasSubstr("process 'd' of the placement from default: expected at least one node to run, found none"));
  // This process unknown to the placement.
  EXPECT_THAT(error_of(in_process("z", local_placement({"a", "b", "c"}, dir.path()))),
              HasSubstr("expected a process named \"z\""));
  // A node placed nowhere.
  Pipeline p(in_process("a", local_placement({"a"}, dir.path())));
  p.connect(p.source("n", sources::list({tensor<float>({1})}), {.process = "a"}),
            p.sink("out", sinks::collector()));
  try {
    p.run();
    FAIL() << "expected a PipelineError";
  } catch (const PipelineError& e) {
    EXPECT_THAT(e.what(), HasSubstr("sink 'out': expected the process that runs it"));
  }
}

TEST(Partition, AProcessThatNeverComesFailsTheOthersWithinTheTimeout) {
  TempDir dir;
  Placement placement = local_placement({"a", "b", "c"}, dir.path());
  PipelineOptions o = in_process("a", placement);
  o.partition.meet_timeout = std::chrono::milliseconds(500);
  auto b = std::async(std::launch::async, [&] {
    PipelineOptions ob = o;
    ob.partition.process = "b";
    try {
      partitioned_pipeline(ob, 10).pipeline->run();
    } catch (const PipelineError& e) { return std::string(e.what()); }
    return std::string("no error");
  });
  try {
    partitioned_pipeline(o, 10).pipeline->run();
    FAIL() << "expected a PipelineError";
  } catch (const PipelineError& e) { EXPECT_THAT(e.what(), HasSubstr("process(es) 'c' did not come")); }
  ASSERT_EQ(b.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_THAT(b.get(), HasSubstr("process(es) 'c' did not come"));
}

}  // namespace
}  // namespace sluice
