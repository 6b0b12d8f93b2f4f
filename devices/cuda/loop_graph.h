#pragma once
// The two kernels a loop's CUDA graph runs around each step of its body
// (cuda_step_loop.cpp; compiled by nvcc in loop_graph.cu, as the graph's
// condition is set from the device with cudaGraphSetConditional): one
// moves the carry and a scan's rows, the other decides whether another
// step runs.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace sluice::cuda {

// A copy made after each step of a loop, and before the first. Row copies
// take step i's row, `bytes` long, of a stacked array: row i, or row
// length - 1 - i when the loop runs in reverse.
struct LoopCopy {
  enum class Kind : int32_t {
    Carry,        // from -> to (before the first step: the loop's initial carry)
    ToRow,        // from -> to's row of the step just run (a scan's y); none before the first
    FromNextRow,  // from's row of the next step -> to (a scan's x), while there is one
  };
  Kind kind = Kind::Carry;
  void* to = nullptr;
  const void* from = nullptr;
  int64_t bytes = 0;
};

// At most this many copies a loop (carries, xs and ys together): a loop with
// more runs its steps from the host.
inline constexpr int kMaxLoopCopies = 32;

struct LoopCopies {
  LoopCopy copy[kMaxLoopCopies];
  int32_t count = 0;
  int64_t largest = 0;  // the most bytes of one copy
};

// Queues `copies` for the step counted at state[0] of a loop of `length`
// steps; `first`: before the first step, setting the counter to 0.
// Nothing is queued for no copies: a loop has at least one.
cudaError_t enqueue_loop_copies(const LoopCopies& copies, int64_t* state, int64_t length, bool reverse,
                                bool first, cudaStream_t stream);

// Queues the decision whether the loop's graph runs its body again:
// `advance` counts a step done at state[0] first; the condition is then the
// byte at `pred`, or, without one, whether state[0] is below `length`.
cudaError_t enqueue_loop_decision(int64_t* state, int64_t length, const uint8_t* pred, bool advance,
                                  cudaGraphConditionalHandle handle, cudaStream_t stream);

}  // namespace sluice::cuda
