#pragma once
// What the CUDA benchmarks share (cuda.cpp, cuda_ops.cpp): the GPU they run
// on and the checks of their baselines' CUDA calls.

#include <cuda_runtime_api.h>

#include <functional>
#include <stdexcept>
#include <string>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"

#include <sluice/devices/backend.h>

namespace sluice::bench {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// The GPU, its client made with the allocator taking memory as needed, so
// that the baselines' own cudaMalloc calls find room.
inline Device gpu() {
  static Device d = client("cuda", {.preallocate = false}).default_device();
  return d;
}

// Whether this machine has a GPU: the benchmarks register only then.
bool gpu_here();

// `calls` runs of `run` (each queuing work on the GPU and returning its
// result) against `calls` device-to-device copies of `bytes` from `source`,
// interleaved, each side waiting once per round.
Samples against_device_copy(benchmark::State& state, const std::function<Tensor()>& run, const void* source,
                            size_t bytes, int calls);

}  // namespace sluice::bench
