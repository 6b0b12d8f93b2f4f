// Partitioned pipelines (PartitionOptions): one program, each process
// building its own part; here the processes are threads of this test, each
// with its own Pipeline, joined by real ipc channels. The same program as
// separate processes, under mpirun and across network namespaces, is
// partition_mpirun_test.sh and partition_netns_test.sh.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <thread>

#include <fmt/core.h>

#include <sluice/io/curve.h>

#include "tests/pipeline/partitioned_pipeline.h"
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using testing::partitioned_pipeline;
using testing::result_bytes;
using testing::thread_process_options;

constexpr int64_t kMessages = 300;

// Runs process `me` of the program; what "results" took when it runs there.
std::string run_process(const std::string& me, const Placement& placement, int64_t width = 64) {
  auto built = partitioned_pipeline(thread_process_options(me, placement), kMessages, width);
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
      auto built = partitioned_pipeline(
          thread_process_options(std::string(1, static_cast<char>('a' + k)), placement), 20);
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
  EXPECT_THAT(error_of(thread_process_options("a", local_placement({"a", "b"}, dir.path()))),
              HasSubstr("runs in process 'c', which the placement from default does not have"));
  // A process of the placement with nothing to run.
  EXPECT_THAT(
      error_of(thread_process_options("a", local_placement({"a", "b", "c", "d"}, dir.path()))),
      HasSubstr("process 'd' of the placement from default: expected at least one node to run, found none"));
  // This process unknown to the placement.
  EXPECT_THAT(error_of(thread_process_options("z", local_placement({"a", "b", "c"}, dir.path()))),
              HasSubstr("expected a process named \"z\""));
  // A node placed nowhere.
  Pipeline p(thread_process_options("a", local_placement({"a"}, dir.path())));
  p.connect(p.source("n", sources::list({tensor<float>({1})}), {.process = "a"}),
            p.sink("out", sinks::collector()));
  try {
    p.run();
    FAIL() << "expected a PipelineError";
  } catch (const PipelineError& e) {
    EXPECT_THAT(e.what(), HasSubstr("sink 'out': expected the process that runs it"));
  }
}

// The placement's CurveZMQ keys secure the meeting as they do the edges:
// three processes over CurveZMQ give the one-process results, and a
// process whose key the others do not have is refused at the meeting,
// says so at once, and the others fail naming it missing. (The meeting once
// ran in plaintext whatever the edges did.)
TEST(Partition, CurveKeysSecureTheMeetingAndTheEdges) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() + "/keys");
  std::filesystem::create_directories(dir.path() + "/strangers");
  for (const char* name : {"a", "b", "c"}) curve::save(dir.path() + "/keys/" + name, curve::generate());
  curve::save(dir.path() + "/strangers/b", curve::generate());
  // Each run its own sockets (abstract ipc names): nothing of one run's is
  // found by the next.
  auto placement_with = [&](const std::string& b_keys, const std::string& run) {
    std::string text = R"({"processes": [)";
    for (const std::string name : {"a", "b", "c"}) {
      const std::string keys = name == "b" ? b_keys : dir.path() + "/keys/" + name;
      text += (name == "a" ? "" : ", ") +
              fmt::format(R"({{"name": "{}", "ipc": "@sluice-curve-test-{}-{}", "curve_secret": "{}_secret", "curve_public": "{}"}})",
                          name, getpid(), run, keys, keys);
    }
    return parse_placement(text + "]}", "test");
  };

  const Placement placement = placement_with(dir.path() + "/keys/b", "whole");
  ASSERT_TRUE(placement.curve());
  auto whole = partitioned_pipeline({}, kMessages);
  whole.pipeline->run();
  auto a = std::async(std::launch::async, [&] { return run_process("a", placement); });
  auto b = std::async(std::launch::async, [&] { return run_process("b", placement); });
  EXPECT_TRUE(run_process("c", placement) == result_bytes(*whole.results)) << "the results over CurveZMQ differ";
  EXPECT_TRUE(a.get().empty());
  EXPECT_TRUE(b.get().empty());
  // Abstract names are in no file system: nothing is made where the test runs.
  EXPECT_FALSE(std::filesystem::exists(fmt::format("@sluice-curve-test-{}-whole", getpid())));

  const Placement good = placement_with(dir.path() + "/keys/b", "stranger");
  const Placement stranger = placement_with(dir.path() + "/strangers/b", "stranger");
  auto failing = [&](const std::string& me, const Placement& p) {
    return std::async(std::launch::async, [&, me] {
      PipelineOptions o = thread_process_options(me, p);
      o.partition.meet_timeout = std::chrono::milliseconds(2000);
      try {
        partitioned_pipeline(o, 10).pipeline->run();
      } catch (const PipelineError& e) { return std::string(e.what()); }
      return std::string("no error");
    });
  };
  const auto start = std::chrono::steady_clock::now();
  auto refused = failing("b", stranger);
  auto host = failing("a", good);
  auto other = failing("c", good);
  ASSERT_EQ(refused.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_THAT(refused.get(), HasSubstr("refused: unknown key"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "the refusal was waited out";
  ASSERT_EQ(host.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_THAT(host.get(), HasSubstr("process(es) 'b' did not come"));
  ASSERT_EQ(other.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_THAT(other.get(), HasSubstr("process(es) 'b' did not come"));
}

TEST(Partition, AProcessThatNeverComesFailsTheOthersWithinTheTimeout) {
  TempDir dir;
  Placement placement = local_placement({"a", "b", "c"}, dir.path());
  PipelineOptions o = thread_process_options("a", placement);
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
