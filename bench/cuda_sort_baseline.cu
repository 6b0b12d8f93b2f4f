#include "bench/cuda_sort_baseline.h"

#include <cub/device/device_radix_sort.cuh>

#include <stdexcept>

namespace sluice::bench {

CubSortKeys::CubSortKeys(const float* in, float* out, int64_t n) : in_(in), out_(out), n_(n) {
  cub::DeviceRadixSort::SortKeys(nullptr, temporary_bytes_, in_, out_, n_);
  if (cudaMalloc(&temporary_, temporary_bytes_) != cudaSuccess) throw std::runtime_error("cub: cudaMalloc");
}

CubSortKeys::~CubSortKeys() { cudaFree(temporary_); }

void CubSortKeys::run() {
  if (cub::DeviceRadixSort::SortKeys(temporary_, temporary_bytes_, in_, out_, n_) != cudaSuccess)
    throw std::runtime_error("cub: SortKeys");
}

}  // namespace sluice::bench
