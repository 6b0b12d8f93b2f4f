// CUB's radix sort of one line of values (radix_sort.h), and what puts its
// NaNs where numpy puts them. CUB orders floats by their bits, -0.0 taken as
// 0.0 (cub/block/radix_rank_sort_operations.cuh), so NaNs whose sign bit is
// set come before every number and the others after it: the line comes out
// as [NaNs][numbers][NaNs]. Where it holds a NaN, the numbers are moved to
// their place and the NaNs written after them (before them, descending) in
// the order of the input, as a stable sort with every NaN equal puts them.
// The kernel that does this (place_nans) is queued every time and ends at
// once when the line holds none: whether it does is known on the GPU only.

#include <sluice/devices/cuda/radix_sort.h>

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <type_traits>

namespace sluice::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int64_t kChunk = 8192;  // the NaNs of a chunk of the input are written by one block
constexpr size_t kAlignment = 256;

size_t aligned(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
__host__ __device__ int64_t chunks_of(int64_t n) { return (n + kChunk - 1) / kChunk; }

__device__ bool sign_bit(float v) { return __float_as_int(v) < 0; }
__device__ bool sign_bit(double v) { return __double_as_longlong(v) < 0; }

// Where the NaNs of a sorted line go: one cooperative kernel (its blocks
// all resident, synchronising as a grid), in phases.
//   1. One thread finds the NaNs at each end. Ascending, those before the
//      numbers have the sign bit set; descending, the others. A line with a
//      number at each end has none, and every block ends here.
//   2. The numbers go to a stash, out of the way of their move; each block
//      counts the NaNs of its chunks of the input.
//   3. The numbers go to their place; one block makes the counts offsets.
//   4. Each block writes its chunks' NaNs in their order, after the numbers
//      (before them, descending).
// state: the NaNs before and after the numbers.
template <class T>
__global__ void place_nans(const T* in, T* sorted, int64_t n, bool descending, int64_t* state,
                           int64_t* counts, T* stash) {
  cg::grid_group grid = cg::this_grid();
  if (grid.thread_rank() == 0) {
    const T front = sorted[0], back = sorted[n - 1];
    int64_t before = 0, after = 0;
    if (front != front || back != back) {
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
      before = lo;
      hi = n;
      while (lo < hi) {  // the first trailing NaN
        const int64_t mid = lo + (hi - lo) / 2;
        if (trailing(mid))
          hi = mid;
        else
          lo = mid + 1;
      }
      after = n - lo;
    }
    state[0] = before;
    state[1] = after;
  }
  grid.sync();
  const int64_t before = state[0], nans = state[0] + state[1], numbers = n - nans;
  if (nans == 0) return;

  using Reduce = cub::BlockReduce<int, kThreads>;
  using OffsetScan = cub::BlockScan<int64_t, kThreads>;
  using RankScan = cub::BlockScan<int, kThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename OffsetScan::TempStorage offsets;
    typename RankScan::TempStorage ranks;
  } temp;
  const int64_t chunks = chunks_of(n);
  auto chunk_end = [&](int64_t chunk) { return (chunk + 1) * kChunk < n ? (chunk + 1) * kChunk : n; };

  for (int64_t i = grid.thread_rank(); i < numbers; i += grid.size()) stash[i] = sorted[before + i];
  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    int found = 0;
    for (int64_t i = chunk * kChunk + threadIdx.x; i < chunk_end(chunk); i += blockDim.x)
      found += in[i] != in[i];
    const int total = Reduce(temp.reduce).Sum(found);
    if (threadIdx.x == 0) counts[chunk] = total;
    __syncthreads();
  }
  grid.sync();

  const int64_t at = descending ? nans : 0;
  for (int64_t i = grid.thread_rank(); i < numbers; i += grid.size()) sorted[at + i] = stash[i];
  if (blockIdx.x == 0) {
    int64_t carry = 0;
    for (int64_t base = 0; base < chunks; base += kThreads) {
      const int64_t i = base + threadIdx.x;
      int64_t offset = 0, total = 0;
      OffsetScan(temp.offsets).ExclusiveSum(i < chunks ? counts[i] : 0, offset, total);
      if (i < chunks) counts[i] = carry + offset;
      carry += total;
      __syncthreads();
    }
  }
  grid.sync();

  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    int64_t to = (descending ? 0 : numbers) + counts[chunk];
    for (int64_t base = chunk * kChunk; base < chunk_end(chunk); base += kThreads) {
      const int64_t i = base + threadIdx.x;
      const int nan = i < chunk_end(chunk) && in[i] != in[i];
      int rank = 0, count = 0;
      RankScan(temp.ranks).ExclusiveSum(nan, rank, count);
      if (nan) sorted[to + rank] = in[i];
      to += count;
      __syncthreads();
    }
  }
}

// As many blocks of place_nans<T> as the GPU holds at once (a cooperative
// launch needs them all resident), and no more than there are chunks.
template <class T>
int place_nans_blocks(int64_t n) {
  static std::mutex mutex;
  static std::map<int, int> resident;  // by device
  int device = 0;
  cudaGetDevice(&device);
  int blocks = 0;
  {
    std::lock_guard lock(mutex);
    auto it = resident.find(device);
    if (it == resident.end()) {
      int per_multiprocessor = 0, multiprocessors = 0;
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_multiprocessor, place_nans<T>, kThreads, 0);
      cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
      it = resident.emplace(device, std::max(1, per_multiprocessor * multiprocessors)).first;
    }
    blocks = it->second;
  }
  return static_cast<int>(std::min<int64_t>(blocks, chunks_of(n)));
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
    const T* source = in;
    T* result = out;
    void* args[] = {&source, &result, &n, &descending, &state, &counts, &stash};
    if (cudaError_t e = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(place_nans<T>),
                                                    dim3(static_cast<unsigned>(place_nans_blocks<T>(n))),
                                                    dim3(kThreads), args, 0, s);
        e != cudaSuccess)
      return e;
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
