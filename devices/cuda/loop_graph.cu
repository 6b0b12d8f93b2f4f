#include <sluice/devices/cuda/loop_graph.h>

#include <cuda_device_runtime_api.h>

#include <algorithm>

namespace sluice::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 1024;

__device__ int64_t row(int64_t i, int64_t length, bool reverse) { return reverse ? length - 1 - i : i; }

__device__ void decide(int64_t* state, int64_t length, const LoopDecision& d) {
  if (d.advance) ++state[0];
  cudaGraphSetConditional(d.handle, d.pred ? (*d.pred != 0) : (state[0] < length));
}

// A block row per copy (blockIdx.y), its bytes across the blocks of that row:
// 16 bytes at a time where both ends and the length allow, else byte by byte.
// Every block reads the counter before it takes its ticket (state[1]); the
// block that takes the last one decides and so is the only one to write it.
__global__ void loop_copies(LoopCopies copies, int64_t* state, int64_t length, bool reverse, bool first,
                            LoopDecision decision, bool decides) {
  const LoopCopy c = copies.copy[blockIdx.y];
  const int64_t i = first ? -1 : state[0];
  char* to = static_cast<char*>(c.to);
  const char* from = static_cast<const char*>(c.from);
  bool moves = to != nullptr;
  switch (c.kind) {
    case LoopCopy::Kind::Carry: break;
    case LoopCopy::Kind::ToRow:
      moves = !first;
      to += first ? 0 : row(i, length, reverse) * c.bytes;
      break;
    case LoopCopy::Kind::FromNextRow:
      moves = i + 1 < length;
      from += moves ? row(i + 1, length, reverse) * c.bytes : 0;
      break;
  }
  if (moves && to != from) {
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
  if (!decides) return;
  __shared__ bool last;
  __syncthreads();  // the block's reads of the counter and its copies are done
  if (threadIdx.x == 0) {
    __threadfence();
    const auto blocks = static_cast<unsigned long long>(gridDim.x) * gridDim.y;
    last = atomicAdd(reinterpret_cast<unsigned long long*>(&state[1]), 1ull) == blocks - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    state[1] = 0;
    decide(state, length, decision);
  }
}

__global__ void loop_start(int64_t* state) { state[0] = state[1] = 0; }

__global__ void loop_decision(int64_t* state, int64_t length, LoopDecision decision) {
  decide(state, length, decision);
}

}  // namespace

cudaError_t enqueue_loop_start(int64_t* state, cudaStream_t stream) {
  loop_start<<<1, 1, 0, stream>>>(state);
  return cudaGetLastError();
}

cudaError_t enqueue_loop_copies(const LoopCopies& copies, int64_t* state, int64_t length, bool reverse,
                                bool first, const LoopDecision* decision, cudaStream_t stream) {
  if (copies.count == 0)
    return decision ? enqueue_loop_decision(state, length, *decision, stream) : cudaSuccess;
  const int64_t words = (copies.largest + 15) / 16;
  const dim3 grid(
      static_cast<unsigned>(std::clamp<int64_t>((words + kThreads - 1) / kThreads, 1, kMaxBlocks)),
      static_cast<unsigned>(copies.count));
  loop_copies<<<grid, kThreads, 0, stream>>>(copies, state, length, reverse, first,
                                             decision ? *decision : LoopDecision{}, decision != nullptr);
  return cudaGetLastError();
}

cudaError_t enqueue_loop_decision(int64_t* state, int64_t length, const LoopDecision& decision,
                                  cudaStream_t stream) {
  loop_decision<<<1, 1, 0, stream>>>(state, length, decision);
  return cudaGetLastError();
}

}  // namespace sluice::cuda
