// PipelineOptions::trace and merge_traces: the Chrome trace a run writes,
// parsed and checked as a viewer reads it (a slice per node per message,
// none overlapping another on its thread, a flow per message from its
// source to its sinks, across processes once merged), bounded, and refused
// where it cannot be written or is no trace.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/trace.h>

#include "tests/pipeline/partitioned_pipeline.h"
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::vector<json> events_of(const json& trace, const std::string& phase) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == phase) out.push_back(e);
  return out;
}

// numbers (n messages) -> running (acc) -> results
void run_small(PipelineOptions options, int messages) {
  Pipeline p(std::move(options));
  std::vector<Tensor> list;
  for (int i = 0; i < messages; ++i) list.push_back(tensor<float>({float(i), 1, 2, 3}));
  NodeId numbers = p.source("numbers", sources::list(list));
  NodeId running = p.stage("running", [](Expr x, Expr acc) { return tuple(acc + x, acc + x); },
                           {.acc = {zeros(f32({4}))}});
  NodeId results = p.sink("results", sinks::collector());
  p.connect(numbers, running);
  p.connect(running, results);
  p.run();
}

// On each thread, slices nest or follow one another: a viewer draws them as
// a stack, which one overlapping another's end breaks.
void expect_slices_nest_per_thread(const std::vector<json>& slices) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> by_thread;
  for (const json& s : slices) {
    ASSERT_GE(s["dur"].get<double>(), 0.0) << s.dump();
    const double ts = s["ts"].get<double>();
    by_thread[{s["pid"].get<int64_t>(), s["tid"].get<int64_t>()}].push_back(
        {ts, ts + s["dur"].get<double>()});
  }
  for (auto& [thread, spans] : by_thread) {
    std::sort(spans.begin(), spans.end());
    std::vector<double> open;  // ends of the slices enclosing the current one
    for (const auto& [start, end] : spans) {
      while (!open.empty() && open.back() <= start) open.pop_back();
      if (!open.empty()) { EXPECT_LE(end, open.back() + 1e-3) << "a slice overlapping the end of another"; }
      open.push_back(end);
    }
  }
}

// Each message's flow: one start, steps and ends after it. The slices
// carry it (flow events v2): flow_out alone starts it, flow_in alone ends
// it, both make a step.
void expect_flows_run_forward(const std::vector<json>& events, size_t messages, size_t steps, size_t ends) {
  std::map<uint64_t, std::vector<std::pair<std::string, double>>> flows;
  for (const json& e : events) {
    if (!e.contains("bind_id")) continue;
    EXPECT_EQ(e["ph"], "X") << e.dump();
    const bool in = e.value("flow_in", false), out = e.value("flow_out", false);
    ASSERT_TRUE(in || out) << "a slice bound to a flow that neither comes in nor goes on: " << e.dump();
    flows[e["bind_id"].get<uint64_t>()].push_back({in && out ? "t" : out ? "s" : "f", e["ts"].get<double>()});
  }
  ASSERT_EQ(flows.size(), messages);
  for (const auto& [id, points] : flows) {
    const auto count = [&](const char* ph) {
      return std::count_if(points.begin(), points.end(), [&](const auto& p) { return p.first == ph; });
    };
    ASSERT_EQ(count("s"), 1) << "flow " << id;
    EXPECT_EQ(static_cast<size_t>(count("t")), steps) << "flow " << id;
    EXPECT_EQ(static_cast<size_t>(count("f")), ends) << "flow " << id;
    const double start =
        std::find_if(points.begin(), points.end(), [](const auto& p) { return p.first == "s"; })->second;
    for (const auto& [ph, ts] : points)
      EXPECT_LE(start, ts) << "flow " << id << ": its " << ph << " before its start";
  }
}

TEST(Trace, ARunWritesASlicePerNodePerMessageAndAFlowPerMessage) {
  TempDir dir;
  const std::string path = dir.path() + "/trace.json";
  run_small({.trace = path}, 50);
  const json trace = read_json(path);
  const std::vector<json> slices = events_of(trace, "X");
  ASSERT_EQ(slices.size(), 150u);
  std::map<std::string, std::set<uint64_t>> seqs;
  for (const json& s : slices) seqs[s["name"]].insert(s["args"]["seq"].get<uint64_t>());
  ASSERT_EQ(seqs.size(), 3u);
  for (const char* node : {"numbers", "running", "results"}) {
    EXPECT_EQ(seqs[node].size(), 50u) << node;
    EXPECT_EQ(*seqs[node].rbegin(), 49u) << node;
  }
  for (const json& s : slices)
    EXPECT_EQ(s["cat"], s["name"] == "numbers" ? "source" : s["name"] == "running" ? "stage" : "sink");
  expect_slices_nest_per_thread(slices);
  expect_flows_run_forward(trace["traceEvents"], 50, 1, 1);
  EXPECT_EQ(trace["otherData"]["events"], 150);
  EXPECT_EQ(trace["otherData"]["events_dropped"], 0);
  EXPECT_EQ(events_of(trace, "M").at(0)["args"]["name"], "sluice");
}

// Each message's wait in a node's queue: an async slice (begin, end)
// from the moment the node before let it go (its slice's end) to the
// moment this node took it (its slice's start), for every node a message
// comes into and waits a microsecond or more.
TEST(Trace, EachMessagesWaitInANodesQueueRunsFromTheNodeBeforeToThisNode) {
  TempDir dir;
  const std::string path = dir.path() + "/trace.json";
  run_small({.trace = path}, 50);
  const json trace = read_json(path);
  // Each slice's start and end, by node and flow.
  std::map<std::pair<std::string, uint64_t>, std::pair<double, double>> slices;
  for (const json& s : events_of(trace, "X"))
    slices[{s["name"], s["bind_id"]}] = {s["ts"].get<double>(),
                                         s["ts"].get<double>() + s["dur"].get<double>()};
  std::map<std::string, std::map<std::string, double>> waits;  // by id: "b" and "e"
  std::map<std::string, std::string> node_of;
  for (const std::string phase : {"b", "e"})
    for (const json& e : events_of(trace, phase)) {
      EXPECT_EQ(e["cat"], "queue") << e.dump();
      const std::string id = e["id"];
      ASSERT_FALSE(waits[id].contains(phase)) << "two " << phase << " for " << id;
      waits[id][phase] = e["ts"].get<double>();
      node_of[id] = e["name"];
    }
  // The stage's and the sink's; not the source's, whose messages come from nowhere.
  const std::map<std::string, std::string> before = {{"running queue", "numbers"},
                                                     {"results queue", "running"}};
  size_t long_waits = 0;
  for (const auto& [to, from] : before)
    for (uint64_t flow = 0; flow < 50; ++flow)
      long_waits +=
          slices.at({to.substr(0, to.size() - 6), flow}).first - slices.at({from, flow}).second >= 1.001;
  EXPECT_GT(long_waits, 0u) << "no message waited: the test shows nothing";
  EXPECT_GE(waits.size(), long_waits);
  EXPECT_LE(waits.size(), 100u);
  for (const auto& [id, ends] : waits) {
    ASSERT_EQ(ends.size(), 2u) << id << ": a wait not closed";
    ASSERT_TRUE(before.contains(node_of[id])) << node_of[id];
    const uint64_t flow = std::stoull(id.substr(id.find('.') + 1));
    const std::string node = node_of[id].substr(0, node_of[id].size() - 6);
    const std::string& from = before.at(node_of[id]);
    const auto here = slices.find({node, flow}), there = slices.find({from, flow});
    ASSERT_TRUE(here != slices.end() && there != slices.end()) << id;
    EXPECT_NEAR(ends.at("e"), here->second.first, 1e-6) << id << ": ends where " << node << " starts";
    EXPECT_NEAR(ends.at("b"), there->second.second, 2e-3) << id << ": begins where " << from << " ends";
    EXPECT_GE(ends.at("e") - ends.at("b"), 0.999) << id << ": a hand-off, not a wait";
  }
}

TEST(Trace, CheckpointBarriersAreInstantsOnTheNodesTheyPass) {
  TempDir dir;
  const std::string path = dir.path() + "/trace.json";
  run_small({.checkpoint_dir = dir.path() + "/checkpoints",
             .checkpoint_interval = {.messages = 10},
             .trace = path},
            50);
  const json trace = read_json(path);
  std::map<std::string, std::set<std::string>> barriers;  // by name, the nodes
  for (const json& e : events_of(trace, "i")) {
    EXPECT_EQ(e["cat"], "checkpoint");
    barriers[e["name"]].insert(e["args"]["node"]);
  }
  ASSERT_GE(barriers.size(), 4u) << "a barrier every 10 of 50 messages";
  for (const auto& [name, nodes] : barriers)
    EXPECT_EQ(nodes, (std::set<std::string>{"running", "results"})) << name << ": the stateful stage and the sink";
}

TEST(Trace, AtMostTraceMaxEventsAreKeptAndTheRestCounted) {
  TempDir dir;
  const std::string path = dir.path() + "/trace.json";
  run_small({.trace = path, .trace_max_events = 10}, 50);
  const json trace = read_json(path);
  EXPECT_EQ(events_of(trace, "X").size(), 10u);
  EXPECT_EQ(trace["otherData"]["events"], 10);
  EXPECT_EQ(trace["otherData"]["events_dropped"], 140);
}

TEST(Trace, AFileThatCannotBeMadeFailsTheStartNamingIt) {
  TempDir dir;
  const std::string path = dir.path() + "/no/such/folder/trace.json";
  try {
    run_small({.trace = path}, 3);
    FAIL() << "expected a PipelineError";
  } catch (const PipelineError& e) { EXPECT_THAT(e.what(), HasSubstr("cannot create '" + path + "'")); }
}

// The recorder writes over an earlier run's file rather than truncating it
// first: what was there must not outlive the run, past the new end or after
// a start that failed.
TEST(Trace, AnEarlierFileAtThePathIsReplacedWholeOrEmptiedByAFailedStart) {
  TempDir dir;
  const std::string path = dir.path() + "/trace.json";
  std::ofstream(path) << std::string(1 << 20, 'x');
  run_small({.trace = path}, 3);
  EXPECT_EQ(events_of(read_json(path), "X").size(), 9u);

  // A start that fails once the file is open: the metrics port is taken.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  EXPECT_THROW(run_small({.metrics_port = ntohs(addr.sin_port), .trace = path}, 3), PipelineError);
  close(fd);
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
}

TEST(Trace, ThreeProcessesMergedFollowEachMessageAcrossThem) {
  TempDir dir;
  const Placement placement = local_placement({"a", "b", "c"}, dir.path());
  constexpr int64_t kMessages = 40;
  auto run = [&](const std::string& me) {
    PipelineOptions o = testing::thread_process_options(me, placement);
    o.trace = dir.path() + "/" + me + ".json";
    testing::partitioned_pipeline(o, kMessages).pipeline->run();
  };
  auto a = std::async(std::launch::async, run, "a");
  auto b = std::async(std::launch::async, run, "b");
  run("c");
  a.get();
  b.get();
  const std::string merged_path = dir.path() + "/merged.json";
  const std::vector<TraceFile> files =
      merge_traces({dir.path() + "/a.json", dir.path() + "/b.json", dir.path() + "/c.json"}, merged_path);
  ASSERT_EQ(files.size(), 3u);
  for (const TraceFile& f : files) EXPECT_EQ(f.offset_us, 0.0) << f.path << ": one host, one clock";
  EXPECT_EQ(files[1].process, "b");
  const json merged = read_json(merged_path);
  std::set<std::string> processes;
  for (const json& m : events_of(merged, "M")) processes.insert(m["args"]["name"]);
  EXPECT_EQ(processes, (std::set<std::string>{"a", "b", "c"}));
  // Each message: numbers (a) starts it; the edges a->b, the stages of b,
  // the edges out of b and a, their ends in c, and joined step it on;
  // results (c) ends it.
  std::map<std::string, size_t> slices_per_node;
  for (const json& s : events_of(merged, "X")) ++slices_per_node[s["name"]];
  EXPECT_EQ(slices_per_node["numbers"], size_t{kMessages});
  EXPECT_EQ(slices_per_node["results"], size_t{kMessages});
  EXPECT_EQ(slices_per_node.size(), 8u) << "5 nodes and 3 edges, whose two ends have the edge's name";
  EXPECT_EQ(slices_per_node["numbers->joined"], size_t{2 * kMessages}) << "its sending and its receiving end";
  expect_slices_nest_per_thread(events_of(merged, "X"));
  expect_flows_run_forward(merged["traceEvents"], kMessages, 9, 1);
}

// Files from two hosts: each host's monotonic clock is its own, so the
// second file's timestamps move by how much further its wall clock is from
// its monotonic clock than the first's; files of the first's host stay.
TEST(Trace, MergeMovesAnotherHostsFileByTheDifferenceOfItsClocks) {
  TempDir dir;
  auto write = [&](const std::string& name, const std::string& host, int64_t monotonic_ns,
                   int64_t realtime_ns) {
    const std::string path = dir.path() + "/" + name + ".json";
    json event =
        json::object({{"name", name}, {"ph", "X"}, {"ts", 10.0}, {"dur", 1.0}, {"pid", 1}, {"tid", 1}});
    json trace = json::object({{"traceEvents", json::array({event})},
                               {"otherData", json::object({{"process", name},
                                                           {"host", host},
                                                           {"clock_monotonic_ns", monotonic_ns},
                                                           {"clock_realtime_ns", realtime_ns}})}});
    std::ofstream(path) << trace.dump();
    return path;
  };
  // Wall less monotonic: 1 ms on a, 3.5 ms on b, 1.25 ms on a's other process.
  const std::vector<std::string> paths = {write("first", "a", 5'000'000, 6'000'000),
                                          write("remote", "b", 2'000'000, 5'500'000),
                                          write("local", "a", 7'000'000, 8'250'000)};
  const std::string out = dir.path() + "/merged.json";
  const std::vector<TraceFile> files = merge_traces(paths, out);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_DOUBLE_EQ(files[1].clock_difference_us, 2500);
  EXPECT_DOUBLE_EQ(files[1].offset_us, 2500);
  EXPECT_DOUBLE_EQ(files[2].clock_difference_us, 250);
  EXPECT_DOUBLE_EQ(files[2].offset_us, 0) << "one host, one monotonic clock: nothing moved";
  const json merged = read_json(out);
  std::map<std::string, double> ts;
  for (const json& e : merged["traceEvents"]) ts[e["name"]] = e["ts"].get<double>();
  EXPECT_DOUBLE_EQ(ts["first"], 10);
  EXPECT_DOUBLE_EQ(ts["remote"], 2510);
  EXPECT_DOUBLE_EQ(ts["local"], 10);
}

TEST(Trace, MergeRefusesAFileThatIsNoTraceNamingIt) {
  TempDir dir;
  const std::string path = dir.path() + "/other.json";
  std::ofstream(path) << R"({"traceEvents": []})";
  EXPECT_THAT([&] { merge_traces({path}, dir.path() + "/out.json"); },
              ::testing::ThrowsMessage<PipelineError>(HasSubstr("'" + path + "' is no sluice trace")));
  EXPECT_THAT([&] { merge_traces({dir.path() + "/missing.json"}, dir.path() + "/out.json"); },
              ::testing::ThrowsMessage<PipelineError>(HasSubstr("cannot read")));
}

}  // namespace
}  // namespace sluice
