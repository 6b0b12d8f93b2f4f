#pragma once
// What the CUDA benchmarks share (cuda.cpp, cuda_ops.cpp): the GPU they run
// on and the checks of their baselines' CUDA calls.

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

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

}  // namespace sluice::bench
