// CUB's radix sort of one line of values (radix_sort.h), and what puts its
// NaNs where numpy puts them. CUB orders floats by their bits, -0.0 taken as
// 0.0 (cub/block/radix_rank_sort_operations.cuh), so NaNs whose sign bit is
// set come before every number and the others after it: the line comes out
// as [NaNs][numbers][NaNs]. Where it holds a NaN, the numbers are moved to
// their place and the NaNs written after them (before them, descending) in
// the order of the input, as a stable sort with every NaN equal puts them.
// The kernels that do this are queued every time and end at once when the
// line holds none: whether it does is known on the GPU only.

#include <sluice/devices/cuda/radix_sort.h>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace sluice::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kChunk = 8192;  // the NaNs of a chunk of the input are written by one block
constexpr int kMaxBlocks = 1024;
constexpr size_t kAlignment = 256;

size_t aligned(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
int blocks_for(int64_t items) {
  return static_cast<int>(std::clamp<int64_t>((items + kThreads - 1) / kThreads, 1, kMaxBlocks));
}
__host__ __device__ int64_t chunks_of(int64_t n) { return (n + kChunk - 1) / kChunk; }

__device__ bool sign_bit(float v) { return __float_as_int(v) < 0; }
__device__ bool sign_bit(double v) { return __double_as_longlong(v) < 0; }

// state[0]: the NaNs before the numbers; state[1]: those after. Ascending,
// the first are those with the sign bit set; descending, the others. A line
// with a number at each end has none: the searches' dependent loads, a few
// microseconds of a long line, are left to lines with NaNs.
template <class T>
__global__ void nan_ends(const T* sorted, int64_t n, bool descending, int64_t* state) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const T front = sorted[0], back = sorted[n - 1];
  if (front == front && back == back) {
    state[0] = state[1] = 0;
    return;
  }
  auto leading = [&](int64_t i) { return sorted[i] != sorted[i] && sign_bit(sorted[i]) != descending; };
  auto trailing = [&](int64_t i) { return sorted[i] != sorted[i] && sign_bit(sorted[i]) == descending; };
  int64_t lo = 0, hi = n;
  while (lo < hi) {  // the first that is not a leading NaN
    const int64_t mid = lo + (hi - lo) / 2;
    if (leading(mid))
      lo = mid + 1;
    else
      hi = mid;
  }
  state[0] = lo;
  hi = n;
  while (lo < hi) {  // the first trailing NaN
    const int64_t mid = lo + (hi - lo) / 2;
    if (trailing(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  state[1] = n - lo;
}

// The numbers, out of the way of their move.
template <class T>
__global__ void nan_stash(const T* sorted, int64_t n, const int64_t* state, T* stash) {
  const int64_t before = state[0], numbers = n - state[0] - state[1];
  if (numbers == n) return;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < numbers;
       i += int64_t{gridDim.x} * blockDim.x)
    stash[i] = sorted[before + i];
}

template <class T>
__global__ void nan_unstash(T* sorted, int64_t n, bool descending, const int64_t* state, const T* stash) {
  const int64_t nans = state[0] + state[1];
  if (nans == 0) return;
  const int64_t at = descending ? nans : 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n - nans;
       i += int64_t{gridDim.x} * blockDim.x)
    sorted[at + i] = stash[i];
}

// NaNs of each chunk of the input.
template <class T>
__global__ void nan_count(const T* in, int64_t n, const int64_t* state, int64_t* counts) {
  if (state[0] + state[1] == 0) return;
  using Reduce = cub::BlockReduce<int, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  for (int64_t chunk = blockIdx.x; chunk < chunks_of(n); chunk += gridDim.x) {
    const int64_t end = (chunk + 1) * kChunk < n ? (chunk + 1) * kChunk : n;
    int found = 0;
    for (int64_t i = chunk * kChunk + threadIdx.x; i < end; i += blockDim.x) found += in[i] != in[i];
    const int total = Reduce(temp).Sum(found);
    if (threadIdx.x == 0) counts[chunk] = total;
    __syncthreads();
  }
}

// counts made offsets (an exclusive sum), by one block.
__global__ void nan_offsets(int64_t chunks, const int64_t* state, int64_t* counts) {
  if (state[0] + state[1] == 0) return;
  using Scan = cub::BlockScan<int64_t, kThreads>;
  __shared__ typename Scan::TempStorage temp;
  int64_t carry = 0;
  for (int64_t base = 0; base < chunks; base += kThreads) {
    const int64_t i = base + threadIdx.x;
    int64_t offset = 0, total = 0;
    Scan(temp).ExclusiveSum(i < chunks ? counts[i] : 0, offset, total);
    if (i < chunks) counts[i] = carry + offset;
    carry += total;
    __syncthreads();
  }
}

// Each chunk's NaNs in their order, after the numbers (before, descending).
template <class T>
__global__ void nan_write(const T* in, T* sorted, int64_t n, bool descending, const int64_t* state,
                          const int64_t* offsets) {
  const int64_t nans = state[0] + state[1];
  if (nans == 0) return;
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ typename Scan::TempStorage temp;
  for (int64_t chunk = blockIdx.x; chunk < chunks_of(n); chunk += gridDim.x) {
    const int64_t end = (chunk + 1) * kChunk < n ? (chunk + 1) * kChunk : n;
    int64_t at = (descending ? 0 : n - nans) + offsets[chunk];
    for (int64_t base = chunk * kChunk; base < end; base += kThreads) {
      const int64_t i = base + threadIdx.x;
      const int nan = i < end && in[i] != in[i];
      int rank = 0, count = 0;
      Scan(temp).ExclusiveSum(nan, rank, count);
      if (nan) sorted[at + rank] = in[i];
      at += count;
      __syncthreads();
    }
  }
}

template <class T>
cudaError_t sort_keys(void* temp, size_t& bytes, const T* in, T* out, int64_t n, bool descending,
                      cudaStream_t s) {
  constexpr int bits = sizeof(T) * 8;
  return descending ? cub::DeviceRadixSort::SortKeysDescending(temp, bytes, in, out, n, 0, bits, s)
                    : cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n, 0, bits, s);
}

template <class T>
size_t cub_bytes(int64_t n) {
  size_t ascending = 0, descending = 0;
  sort_keys<T>(nullptr, ascending, nullptr, nullptr, n, false, nullptr);
  sort_keys<T>(nullptr, descending, nullptr, nullptr, n, true, nullptr);
  return aligned(std::max(ascending, descending));
}

// Scratch: CUB's (for floats at least a line long: once the sort is done it
// holds the numbers while they move), then (floats) the chunks' NaN counts
// and the state: extra_bytes.
template <class T>
size_t extra_bytes(int64_t n) {
  if constexpr (std::is_floating_point_v<T>)
    return aligned(sizeof(int64_t) * static_cast<size_t>(chunks_of(n))) + aligned(2 * sizeof(int64_t));
  return 0;
}

template <class T>
size_t scratch_bytes(int64_t n) {
  size_t cub = cub_bytes<T>(n);
  if constexpr (std::is_floating_point_v<T>) cub = std::max(cub, aligned(sizeof(T) * static_cast<size_t>(n)));
  return cub + extra_bytes<T>(n);
}

// `bytes`: scratch_bytes(n), not asked of CUB again here.
template <class T>
cudaError_t sort(const T* in, T* out, int64_t n, bool descending, char* scratch, size_t bytes,
                 cudaStream_t s) {
  size_t cub = bytes - extra_bytes<T>(n);
  if (cudaError_t e = sort_keys<T>(scratch, cub, in, out, n, descending, s); e != cudaSuccess) return e;
  if constexpr (std::is_floating_point_v<T>) {
    T* stash = reinterpret_cast<T*>(scratch);
    auto* counts = reinterpret_cast<int64_t*>(scratch + bytes - extra_bytes<T>(n));
    auto* state = reinterpret_cast<int64_t*>(reinterpret_cast<char*>(counts) +
                                             aligned(sizeof(int64_t) * static_cast<size_t>(chunks_of(n))));
    const int chunk_blocks = static_cast<int>(std::min<int64_t>(chunks_of(n), kMaxBlocks));
    nan_ends<T><<<1, 1, 0, s>>>(out, n, descending, state);
    nan_stash<T><<<blocks_for(n), kThreads, 0, s>>>(out, n, state, stash);
    nan_unstash<T><<<blocks_for(n), kThreads, 0, s>>>(out, n, descending, state, stash);
    nan_count<T><<<chunk_blocks, kThreads, 0, s>>>(in, n, state, counts);
    nan_offsets<<<1, kThreads, 0, s>>>(chunks_of(n), state, counts);
    nan_write<T><<<chunk_blocks, kThreads, 0, s>>>(in, out, n, descending, state, counts);
    return cudaGetLastError();
  }
  return cudaSuccess;
}

// f(T{}) for the value type of `dtype`; false where it has none here.
template <class F>
bool with_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32: f(float{}); return true;
    case DType::F64: f(double{}); return true;
    case DType::S32: f(int32_t{}); return true;
    case DType::S64: f(int64_t{}); return true;
    case DType::U32: f(uint32_t{}); return true;
    case DType::U64: f(uint64_t{}); return true;
    default: return false;
  }
}

}  // namespace

bool radix_sorts(DType dtype, int arch) {
  return arch >= 80 && with_type(dtype, [](auto) {});
}

size_t radix_sort_scratch(DType dtype, int64_t n) {
  size_t bytes = 0;
  with_type(dtype, [&](auto v) { bytes = scratch_bytes<decltype(v)>(n); });
  return bytes;
}

cudaError_t enqueue_radix_sort(DType dtype, const void* in, void* out, int64_t n, bool descending,
                               void* scratch, size_t scratch_bytes_given, cudaStream_t stream) {
  cudaError_t status = cudaErrorInvalidValue;
  with_type(dtype, [&](auto v) {
    using T = decltype(v);
    status = sort<T>(static_cast<const T*>(in), static_cast<T*>(out), n, descending,
                     static_cast<char*>(scratch), scratch_bytes_given, stream);
  });
  return status;
}

}  // namespace sluice::cuda
