// The run log (PipelineOptions::run_log, pipeline/run_log.h): metrics
// snapshots while a pipeline runs, records of the application's own, lines
// whole when several writers share the file, and failures to write that
// surface as PipelineErrors.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/run_log.h>
#include "tests/pipeline/slow_counter.h"
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

using std::chrono::milliseconds;

// Every line of the file, each parsed (a line that is not JSON fails the test).
std::vector<nlohmann::json> read_records(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    out.push_back(std::move(j));
  }
  return out;
}

TEST(RunLog, RecordsAreOneJsonObjectALineWithTimeProcessAndType) {
  TempDir dir;
  const std::string path = dir.path() + "/run.jsonl";
  {
    RunLog log(path, "sink", "demo");
    const std::vector<float> values = {1.0f, 0.333333f, -2.5e-7f};
    log.write(RunRecord("scores")
                  .integer("chunk", 3)
                  .number("accuracy", 0.875)
                  .number("nan", std::nan(""))
                  .text("note", "a \"quoted\"\nline")
                  .numbers("values", values, 3)
                  .json("raw", R"({"a":[1,2]})"));
  }
  std::vector<nlohmann::json> r = read_records(path);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_GT(r[0]["t"].get<double>(), 1.6e9);  // seconds since the epoch
  EXPECT_EQ(r[0]["process"], "sink");
  EXPECT_EQ(r[0]["pipeline"], "demo");
  EXPECT_EQ(r[0]["type"], "scores");
  EXPECT_EQ(r[0]["chunk"], 3);
  EXPECT_EQ(r[0]["accuracy"], 0.875);
  EXPECT_TRUE(r[0]["nan"].is_null());
  EXPECT_EQ(r[0]["note"], "a \"quoted\"\nline");
  EXPECT_EQ(r[0]["values"], nlohmann::json({1.0, 0.333, -2.5e-7}));
  EXPECT_EQ(r[0]["raw"]["a"][1], 2);
}

TEST(RunLog, WritersSharingAFileNeverInterleaveTheirLines) {
  TempDir dir;
  const std::string path = dir.path() + "/shared.jsonl";
  constexpr int kWriters = 4, kEach = 500;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      // A log of its own each, as the processes of a partitioned pipeline have.
      RunLog log(path, "process" + std::to_string(w));
      std::vector<float> wide(200, static_cast<float>(w));
      for (int i = 0; i < kEach; ++i)
        log.write(RunRecord("spectrogram").integer("i", i).numbers("bands", wide));
    });
  for (std::thread& t : writers) t.join();
  std::vector<nlohmann::json> r = read_records(path);
  ASSERT_EQ(r.size(), static_cast<size_t>(kWriters * kEach));
  std::vector<int> next(kWriters, 0);
  for (const nlohmann::json& j : r) {
    int w = std::stoi(j["process"].get<std::string>().substr(7));
    EXPECT_EQ(j["i"], next[static_cast<size_t>(w)]++);  // each writer's lines in its order
    EXPECT_EQ(j["bands"][199], w);
  }
}

TEST(RunLog, APathThatCannotBeOpenedIsAPipelineErrorNamingIt) {
  try {
    Pipeline p({.run_log = "/nonexistent-dir/run.jsonl"});
    FAIL() << "expected a PipelineError";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent-dir/run.jsonl'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
}

TEST(RunLog, ARunningPipelineLogsEveryNodesMetricsUntilItsLastMessage) {
  TempDir dir;
  const std::string path = dir.path() + "/run.jsonl";
  {
    Pipeline p({.name = "counting", .run_log = path, .run_log_every = milliseconds(20)});
    ASSERT_TRUE(p.run_log());
    auto in = p.source("counter", slow_counter(20, milliseconds(5)));
    auto twice = p.stage("twice", [](Expr x) { return x * 2; }, {.input = {s64()}});
    std::shared_ptr<RunLog> log = p.run_log();
    auto out = p.sink("out", [log](const Tensor& t) {
      log->write(RunRecord("seen").integer("value", t.to_vector<int64_t>()[0]));
    });
    p.connect(in, twice);
    p.connect(twice, out);
    p.run();
  }
  std::vector<nlohmann::json> r = read_records(path);
  int snapshots = 0, seen = 0, graphs = 0;
  nlohmann::json last;
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.front()["type"], "graph");  // the graph first, as the run starts
  for (const nlohmann::json& j : r) {
    EXPECT_EQ(j["pipeline"], "counting");
    EXPECT_FALSE(j.contains("process"));  // not partitioned
    if (j["type"] == "graph") {
      ++graphs;
      ASSERT_EQ(j["nodes"].size(), 3u);
      EXPECT_EQ(j["nodes"][1], nlohmann::json({{"name", "twice"}, {"kind", "stage"}, {"process", ""}}));
      EXPECT_EQ(j["edges"], nlohmann::json::parse(R"([{"from": 0, "to": 1, "specs": "s64"},
                                                       {"from": 1, "to": 2, "specs": "s64"}])"));
    } else if (j["type"] == "metrics") {
      ++snapshots;
      ASSERT_EQ(j["nodes"].size(), 3u);
      EXPECT_EQ(j["nodes"][1]["name"], "twice");
      for (const char* field : {"messages_in", "messages_out", "messages_out_per_s", "latency_p50_us",
                                "latency_p99_us", "queue_depth", "errors"})
        EXPECT_TRUE(j["nodes"][1].contains(field)) << field;
      last = j;
    } else {
      EXPECT_EQ(j["type"], "seen");
      EXPECT_EQ(j["value"], 2 * seen++);
    }
  }
  EXPECT_EQ(seen, 20);
  EXPECT_EQ(graphs, 1);
  EXPECT_GE(snapshots, 3);  // at the start, every 20 ms of a run of about 100 ms, at the end
  EXPECT_EQ(last["nodes"][2]["messages_in"], 20);  // the last one has every message counted
}

TEST(RunLog, ALogThatCannotBeWrittenCancelsTheRunAndWaitThrows) {
  // /dev/full takes an open for appending and fails every write with ENOSPC.
  if (!std::ifstream("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  Pipeline p({.run_log = "/dev/full", .run_log_every = milliseconds(10)});
  auto in = p.source("counter", slow_counter(100000, milliseconds(1)));
  auto out = p.sink("out", [](const Tensor&) {});
  p.connect(in, out);
  auto started = std::chrono::steady_clock::now();
  try {
    p.run();
    FAIL() << "expected a PipelineError";
  } catch (const PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("run log '/dev/full'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));  // cancelled, not run out
}

}  // namespace
}  // namespace sluice
