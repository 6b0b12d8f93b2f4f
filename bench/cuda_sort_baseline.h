#pragma once
// CUB's DeviceRadixSort::SortKeys on f32, the baseline of cuda_sort_16M_f32
// (compiled by nvcc, in cuda_sort_baseline.cu; the rest of the benchmark by
// the host compiler).

#include <cstddef>
#include <cstdint>

namespace sluice::bench {

class CubSortKeys {
 public:
  // Sorts n keys from `in` into `out` (device memory) on the default stream.
  CubSortKeys(const float* in, float* out, int64_t n);
  ~CubSortKeys();
  CubSortKeys(const CubSortKeys&) = delete;
  CubSortKeys& operator=(const CubSortKeys&) = delete;
  void run();  // queues one sort

 private:
  const float* in_;
  float* out_;
  int64_t n_;
  void* temporary_ = nullptr;
  size_t temporary_bytes_ = 0;
};

}  // namespace sluice::bench
