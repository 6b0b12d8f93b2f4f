// What checkpoints cost the sensor monitor (samples/sensor_monitor):
//   checkpoint_overhead  its whole pipeline in one process (vibration ->
//                        spectrum -> detector -> monitor) over a fixed number
//                        of chunks, checkpointing every 100 ms to a local
//                        directory, against the same without checkpoints:
//                        reported as throughput with / without.
//   restore_time         a compute process (bench_restore_child: the demo's
//                        two stages) started, restored from a checkpoint of
//                        their accumulators and run to its first output;
//                        milliseconds from its start to that output (compile
//                        included, as a restarted process pays it).

#include <unistd.h>

#include <benchmark/benchmark.h>

#include <chrono>
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

sm::Config config() {
  sm::Config c;
  c.chunks = kChunks;  // the chunk count ends the run, not the clock
  return c;
}

void run_sensor(const sm::Config& c, const std::string& checkpoint_dir) {
  PipelineOptions o = sm::pipeline_options(c);
  if (!checkpoint_dir.empty()) {
    o.checkpoint_dir = checkpoint_dir;
    o.checkpoint_interval.time = std::chrono::milliseconds(100);
  }
  Pipeline p(o);
  NodeId detector = sm::add_compute_stages(p, p.source("vibration", sm::vibration(c)), c);
  std::ostringstream quiet;
  p.connect(detector, p.sink("monitor", std::make_shared<sm::Monitor>(c, quiet, sm::Progress::Off)));
  PipelineResult r = p.run();
  if (!checkpoint_dir.empty() && r.checkpoints.completed < 2)
    throw std::runtime_error("checkpoint_overhead: expected checkpoints every 100 ms, found " +
                             std::to_string(r.checkpoints.completed));
}

struct Dir {
  std::string path =
      (fs::temp_directory_path() / ("sluice-bench-checkpoints-" + std::to_string(getpid()))).string();
  Dir() { fs::create_directories(path); }
  ~Dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

void BM_checkpoint_overhead(benchmark::State& state) {
  const sm::Config c = config();
  Dir dir;
  auto s = interleave(state, timed([&] { run_sensor(c, dir.path); }), timed([&] { run_sensor(c, ""); }));
  report_speedup("checkpoint_overhead", s, 0.9);
}
BENCHMARK(BM_checkpoint_overhead)->Iterations(7)->UseManualTime()->Unit(benchmark::kMillisecond);

// Starts the child and waits for its line: the seconds from start to output.
double restore_once(const std::string& dir) {
  const auto start = std::chrono::steady_clock::now();
  ChildProcess child({sibling_program("bench_restore_child"), "restore", dir}, /*read_output=*/true);
  const std::string line = child.first_line();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (line != "first output restored" || !child.succeeded())
    throw std::runtime_error("restore_time: the child said '" + line + "' and failed");
  return seconds;
}

void BM_restore_time(benchmark::State& state) {
  Dir dir;
  // A checkpoint of the demo's accumulators, as a compute process leaves it.
  if (!ChildProcess({sibling_program("bench_restore_child"), "prepare", dir.path}, false).succeeded()) {
    state.SkipWithError("restore_time: preparing the checkpoint failed");
    return;
  }
  std::vector<double> seconds = measure(state, [&] { return restore_once(dir.path); });
  Row row{.name = "restore_time",
          .sluice_s = median(seconds),
          .baseline_s = std::nullopt,
          .value = median(seconds) * 1e3,
          .goal = 2000,
          .better = Better::Lower,
          .unit = "ms"};
  report(row);
}
BENCHMARK(BM_restore_time)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
