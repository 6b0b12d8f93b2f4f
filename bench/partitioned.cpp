// The sensor monitor (samples/sensor_monitor) as three local processes
// started from its one partitioned program (bench_partition_child, once per
// process, over ipc), over a fixed number of chunks, timed by its monitor
// from the first chunk made to the last scored, so that starting processes
// and compiling are left out. Against:
//   partitioned_vs_local  the same pipeline in one process, timed alike;
//                         throughput of the three processes / of one;
//   demo_throughput       the same work with no pipeline at all: each chunk
//                         made by the source, then the spectrum's and the
//                         detector's steps, and the tachometer's readings
//                         made as far as the chunk's windows and each window
//                         given the one nearest its start (a cursor over
//                         them), back to back on one thread (a oneTBB arena
//                         of one), over the same chunks. What
//                         the demo gains from its processes and cores, so
//                         that the ratio holds from one machine to another;
//   defaults_vs_tuned     the pipeline in one process with the host client's
//                         default options (as a library user makes it)
//                         against the benchmarks' tuned settings, each in a
//                         process of its own (the settings are the process's):
//                         throughput with the defaults / with the tuned ones.

#include <unistd.h>

#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <deque>
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

// The whole pipeline in a child process with the host client's `settings`
// (defaults or tuned): seconds per chunk.
double whole_in_a_child(const std::string& settings) {
  ChildProcess child({sibling_program("bench_partition_child"), "whole", settings, std::to_string(kChunks)},
                     /*read_output=*/true);
  const std::string line = child.first_line();
  if (!child.succeeded() || line.empty())
    throw std::runtime_error("defaults_vs_tuned: the process with " + settings + " settings failed");
  return std::stod(line) / static_cast<double>(kChunks);
}

double back_to_back_on_one_thread() {
  sm::Config c;
  c.chunks = kChunks;
  Step spectrum(sm::spectrum_function(c), sm::signal_spec(c), sm::spectrum_acc(c), host(), "spectrum");
  Step detector(sm::detector_function(c), sm::feature_spec(c), sm::detector_acc(c), host(), "detector");
  Tensors spectrum_acc = spectrum.initial_acc(sm::spectrum_acc(c));
  Tensors detector_acc = detector.initial_acc(sm::detector_acc(c));
  std::shared_ptr<Source> source = sm::vibration(c);
  std::shared_ptr<Source> tachometer = sm::tachometer(c);
  // The readings not yet behind every window, with their times.
  std::deque<std::pair<int64_t, float>> readings;
  bool tachometer_ended = false;
  const auto tolerance = static_cast<int64_t>(c.join_tolerance_ms * 1e6);
  auto join = [&](const Tags& tags, std::vector<float>& shaft_hz, std::vector<uint8_t>& joined) {
    const int64_t first = *tags.time_ns();
    const double rate = *tags.sample_rate();
    for (size_t w = 0; w < shaft_hz.size(); ++w) {
      const int64_t t = first + row_offset_ns(static_cast<int64_t>(w), rate);
      while (!tachometer_ended && (readings.empty() || readings.back().first < t + tolerance)) {
        std::optional<Chunk> more = tachometer->next_chunk();
        if (!more) {
          tachometer_ended = true;
          break;
        }
        const std::vector<float> hz = more->tensors[0].to_vector<float>();
        for (size_t j = 0; j < hz.size(); ++j)
          readings.emplace_back(
              *more->tags.time_ns() + row_offset_ns(static_cast<int64_t>(j), c.tachometer_rate), hz[j]);
      }
      while (readings.size() > 1 && readings[1].first <= t) readings.pop_front();
      const std::pair<int64_t, float>* pick = readings.empty() ? nullptr : &readings[0];
      if (readings.size() > 1 && readings[1].first - t < t - readings[0].first) pick = &readings[1];
      joined[w] = pick && std::llabs(pick->first - t) <= tolerance;
      shaft_hz[w] = joined[w] ? pick->second : 0.0f;
    }
  };
  std::vector<float> shaft_hz(static_cast<size_t>(c.windows_per_chunk));
  std::vector<uint8_t> joined(shaft_hz.size());
  double seconds = 0;
  // Run as a task of an arena of one: the host backend then runs every
  // step on the calling thread, and a kernel that splits its work finds no
  // other thread to give a part to.
  tbb::task_arena one(1);
  one.execute([&] {
    tbb::task_group task;
    task.run_and_wait([&] {
      const auto start = std::chrono::steady_clock::now();
      while (std::optional<Chunk> chunk = source->next_chunk()) {
        Tensors features = spectrum.run(spectrum.place(chunk->tensors), spectrum_acc);
        Tensors scores = detector.run(detector.place(features), detector_acc);
        for (const Tensor& t : scores) t.wait();
        join(chunk->tags, shaft_hz, joined);
        benchmark::DoNotOptimize(shaft_hz.data());
      }
      for (const Tensor& t : detector_acc) t.wait();
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
  });
  return seconds / static_cast<double>(kChunks);
}

void BM_demo_throughput(benchmark::State& state) {
  auto s = interleave(state, in_three_processes, back_to_back_on_one_thread);
  report_speedup("demo_throughput", s, 1.3);
}
BENCHMARK(BM_demo_throughput)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_partitioned_vs_local(benchmark::State& state) {
  auto s = interleave(state, in_three_processes, in_one_process);
  report_speedup("partitioned_vs_local", s, 0.9);
}
BENCHMARK(BM_partitioned_vs_local)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_defaults_vs_tuned(benchmark::State& state) {
  auto s = interleave(
      state, [] { return whole_in_a_child("defaults"); }, [] { return whole_in_a_child("tuned"); });
  report_speedup("defaults_vs_tuned", s, 0.95);
}
BENCHMARK(BM_defaults_vs_tuned)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
