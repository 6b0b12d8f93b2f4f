// partitioned_vs_local: the sensor monitor (samples/sensor_monitor) as
// three local processes started from its one partitioned program
// (bench_partition_child, once per process, over ipc) against the same
// pipeline in one process, over a fixed number of chunks. Each run is
// timed by its monitor, from the first chunk made to the last scored, so
// that starting processes and compiling are left out alike; reported as
// throughput of the three processes / throughput of one.

#include <unistd.h>

#include <benchmark/benchmark.h>

#include <filesystem>
#include <sstream>

#include "bench/bench_report.h"
#include "bench/child_process.h"
#include <sensor_monitor/sensor_monitor.h>

namespace sluice::bench {
namespace {

namespace sm = sensor_monitor;
namespace fs = std::filesystem;

constexpr int64_t kChunks = 400;

double in_one_process() {
  sm::Config c;
  c.chunks = kChunks;
  Pipeline p(sm::pipeline_options(c));
  std::ostringstream quiet;
  auto monitor = std::make_shared<sm::Monitor>(c, quiet, sm::Progress::Off);
  sm::add_sensor_monitor(p, c, monitor);
  p.run();
  return monitor->summary().seconds / static_cast<double>(kChunks);
}

double in_three_processes() {
  const std::string dir =
      (fs::temp_directory_path() / ("sluice-bench-partition-" + std::to_string(getpid()))).string();
  std::string placement;
  for (const std::string& p : sm::kProcesses)
    placement += (placement.empty() ? "" : ",") + p + "=ipc://" + dir;
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (const std::string& process : sm::kProcesses)
    children.push_back(
        std::make_unique<ChildProcess>(std::vector<std::string>{sibling_program("bench_partition_child"),
                                                                process, placement, std::to_string(kChunks)},
                                       /*read_output=*/process == "sink"));
  const std::string line = children.back()->first_line();
  bool ok = true;
  for (auto& child : children) ok = child->succeeded() && ok;
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  if (!ok || line.empty())
    throw std::runtime_error("partitioned_vs_local: a process failed (sink said '" + line + "')");
  return std::stod(line) / static_cast<double>(kChunks);
}

void BM_partitioned_vs_local(benchmark::State& state) {
  auto s = interleave(state, in_three_processes, in_one_process);
  report_speedup("partitioned_vs_local", s, 0.8);
}
BENCHMARK(BM_partitioned_vs_local)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
