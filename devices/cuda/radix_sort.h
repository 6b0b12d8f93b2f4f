#pragma once
// Long lines sorted by CUB's radix sort (radix_sort.cu, compiled by nvcc): what the
// sort step takes for lines long enough that a radix sort's passes beat the
// bitonic network's (cuda_step_sort.cpp). Values only (sort, not argsort),
// of 32- and 64-bit numbers, stably, in numpy's order: -0.0 equal to 0.0,
// and NaNs after every number (before, descending), in the order they came.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include <sluice/ops/dtype.h>

namespace sluice::cuda {

// Whether this build sorts `dtype` this way on a GPU of compute capability
// `arch` (90 for sm_90): nvcc built the code for sm_80 and sm_90, and PTX that
// later GPUs compile.
bool radix_sorts(DType dtype, int arch);

// The scratch enqueue_radix_sort needs for a line of n.
size_t radix_sort_scratch(DType dtype, int64_t n);

// Queues the sort of the n values at `in` into `out` (other memory) on
// `stream`, using `scratch` of radix_sort_scratch(dtype, n) bytes, told in
// `scratch_bytes` (that size is not asked of CUB again).
cudaError_t enqueue_radix_sort(DType dtype, const void* in, void* out, int64_t n, bool descending,
                               void* scratch, size_t scratch_bytes, cudaStream_t stream);

}  // namespace sluice::cuda
