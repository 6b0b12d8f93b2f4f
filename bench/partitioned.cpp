// partitioned_vs_local: the sensor monitor (samples/sensor_monitor) as
// three local processes started from its one partitioned program
// (bench_partition_child, once per process, over ipc) against the same
// pipeline in one process, over a fixed number of chunks. Each run is
// timed by its monitor, from the first chunk made to the last scored, so
// that starting processes and compiling are left out alike; reported as
// throughput of the three processes / throughput of one.

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <filesystem>
#include <sstream>

#include "bench/bench_report.h"
#include "samples/sensor_monitor/sensor_monitor.h"

extern char** environ;

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
  const std::string program =
      (fs::read_symlink("/proc/self/exe").parent_path() / "bench_partition_child").string();
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error("partitioned_vs_local: pipe failed");
  std::vector<pid_t> pids;
  for (const std::string& process : sm::kProcesses) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (process == "sink") posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::string name = process, chunks = std::to_string(kChunks);
    char* argv[] = {const_cast<char*>(program.c_str()), name.data(), placement.data(), chunks.data(),
                    nullptr};
    pid_t pid = 0;
    int failed = posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (failed != 0) throw std::runtime_error("partitioned_vs_local: cannot start " + program);
    pids.push_back(pid);
  }
  close(out[1]);
  std::string line;
  char ch = 0;
  while (read(out[0], &ch, 1) == 1 && ch != '\n') line += ch;
  close(out[0]);
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 && ok;
  }
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
