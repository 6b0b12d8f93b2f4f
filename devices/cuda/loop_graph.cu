#include <sluice/devices/cuda/loop_graph.h>

#include <cuda_device_runtime_api.h>

#include <algorithm>

namespace sluice::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1024;

__device__ int64_t row(int64_t i, int64_t length, bool reverse) { return reverse ? length - 1 - i : i; }

// A block row per copy (blockIdx.y), its bytes across the blocks of that row:
// 16 bytes at a time where both ends and the length allow, else byte by byte.
// Before the first step it sets the counter to 0 (no other thread reads it then).
__global__ void loop_copies(LoopCopies copies, int64_t* state, int64_t length, bool reverse, bool first) {
  if (first && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) state[0] = 0;
  const LoopCopy c = copies.copy[blockIdx.y];
  const int64_t i = first ? -1 : state[0];
  char* to = static_cast<char*>(c.to);
  const char* from = static_cast<const char*>(c.from);
  switch (c.kind) {
    case LoopCopy::Kind::Carry: break;
    case LoopCopy::Kind::ToRow:
      if (first) return;
      to += row(i, length, reverse) * c.bytes;
      break;
    case LoopCopy::Kind::FromNextRow: {
      const int64_t next = i + 1;
      if (next >= length) return;
      from += row(next, length, reverse) * c.bytes;
      break;
    }
  }
  if (to == from) return;
  const int64_t start = blockIdx.x * int64_t{blockDim.x} + threadIdx.x,
                stride = int64_t{gridDim.x} * blockDim.x;
  if (((reinterpret_cast<uintptr_t>(to) | reinterpret_cast<uintptr_t>(from) |
        static_cast<uintptr_t>(c.bytes)) &
       15) == 0) {
    for (int64_t w = start; w < c.bytes / 16; w += stride)
      reinterpret_cast<uint4*>(to)[w] = reinterpret_cast<const uint4*>(from)[w];
  } else {
    for (int64_t b = start; b < c.bytes; b += stride) to[b] = from[b];
  }
}

__global__ void loop_decision(int64_t* state, int64_t length, const uint8_t* pred, bool advance,
                              cudaGraphConditionalHandle handle) {
  if (advance) ++state[0];
  cudaGraphSetConditional(handle, pred ? (*pred != 0) : (state[0] < length));
}

}  // namespace

cudaError_t enqueue_loop_copies(const LoopCopies& copies, int64_t* state, int64_t length, bool reverse,
                                bool first, cudaStream_t stream) {
  if (copies.count == 0) return cudaSuccess;
  const int64_t words = (copies.largest + 15) / 16;
  const dim3 grid(
      static_cast<unsigned>(std::clamp<int64_t>((words + kThreads - 1) / kThreads, 1, kMaxBlocks)),
      static_cast<unsigned>(copies.count));
  loop_copies<<<grid, kThreads, 0, stream>>>(copies, state, length, reverse, first);
  return cudaGetLastError();
}

cudaError_t enqueue_loop_decision(int64_t* state, int64_t length, const uint8_t* pred, bool advance,
                                  cudaGraphConditionalHandle handle, cudaStream_t stream) {
  loop_decision<<<1, 1, 0, stream>>>(state, length, pred, advance, handle);
  return cudaGetLastError();
}

}  // namespace sluice::cuda
