// cuda_ipc_64MiB: a 64 MiB tensor on the GPU handed to another process on the
// same GPU (bench_cuda_ipc_peer) through its CUDA IPC handle: to_pointer
// here, the handle over a pipe, from_pointer there and a copy into that
// process's own tensor, its answer back; against the same copy within one
// process (Tensor::to on the same GPU). The peer opens the region once, in
// the untimed first round: it stays open for the handles after it.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <sluice/devices/backend.h>
#include "bench/bench_report.h"
#include "bench/cuda_bench.h"

extern char** environ;

namespace sluice::bench {
namespace {

// The peer, with a pipe to its stdin and one from its stdout.
class Peer {
 public:
  explicit Peer(int64_t elements) {
    int to[2], from[2];
    if (::pipe(to) != 0 || ::pipe(from) != 0) throw std::runtime_error("pipe");
    const std::string self =
        std::filesystem::read_symlink("/proc/self/exe").parent_path() / "bench_cuda_ipc_peer";
    std::string count = std::to_string(elements);
    std::vector<char*> argv{const_cast<char*>(self.c_str()), count.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from[1], 1);
    posix_spawn_file_actions_addclose(&actions, to[1]);
    posix_spawn_file_actions_addclose(&actions, from[0]);
    const int failed = posix_spawn(&pid_, self.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to[0]);
    ::close(from[1]);
    if (failed != 0) throw std::runtime_error("cannot start " + self);
    in_ = ::fdopen(to[1], "w");
    out_ = ::fdopen(from[0], "r");
  }
  ~Peer() {
    std::fclose(in_);
    std::fclose(out_);
    ::waitpid(pid_, nullptr, 0);
  }
  // Sends the handle and waits for the peer's copy of what it names.
  void copy(const std::string& handle) {
    std::fputs((handle + "\n").c_str(), in_);
    std::fflush(in_);
    char line[64];
    if (!std::fgets(line, sizeof line, out_))
      throw std::runtime_error("bench_cuda_ipc_peer stopped (its log: stderr)");
  }

 private:
  pid_t pid_ = -1;
  std::FILE* in_ = nullptr;
  std::FILE* out_ = nullptr;
};

void BM_cuda_ipc_64MiB(benchmark::State& state) {
  constexpr int64_t n = int64_t{16} << 20;  // f32: 64 MiB
  const Device d = gpu();
  const Tensor x = tensor(uniform_floats(static_cast<size_t>(n), -1, 1, 9), Shape{n}, d);
  Peer peer(n);
  Samples s = interleave(state, timed([&] {
                           const TensorPointer p = x.to_pointer({.mode = PointerMode::Ipc});
                           peer.copy(p.handle);
                         }),
                         timed([&] { x.to(d).wait(); }));
  state.counters["GB/s"] = static_cast<double>(n) * 4 / median(s.sluice) / 1e9;
  report_speedup("cuda_ipc_64MiB", s, 0.5);
}

const bool registered = [] {
  if (!gpu_here()) return false;
  benchmark::RegisterBenchmark("BM_cuda_ipc_64MiB", BM_cuda_ipc_64MiB)
      ->Iterations(15)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
}  // namespace sluice::bench
