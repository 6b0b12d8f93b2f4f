#pragma once
// The kernels a loop's CUDA graph runs around each step of its body
// (cuda_step_loop.cpp; compiled by nvcc in loop_graph.cu, as the graph's
// condition is set from the device with cudaGraphSetConditional): after a
// step, one kernel moves the carry and a scan's rows, and decides whether
// another step runs.

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

// A loop's counters (a scan's step, and the blocks of the copies kernel
// done), set to 0 before its first step.
cudaError_t enqueue_loop_start(int64_t* state, cudaStream_t stream);

// Whether the loop's graph runs its body again: `advance` counts a step done
// at state[0] first; the condition is then the byte at `pred`, or, without
// one, whether state[0] is below the loop's length.
struct LoopDecision {
  const uint8_t* pred = nullptr;
  bool advance = false;
  cudaGraphConditionalHandle handle = 0;
};

// Queues `copies` for the step counted at state[0] of a loop of `length`
// steps (`first`: before the first step), then `decision` where one is
// given, by the last of the copies' blocks to finish: one kernel.
cudaError_t enqueue_loop_copies(const LoopCopies& copies, int64_t* state, int64_t length, bool reverse,
                                bool first, const LoopDecision* decision, cudaStream_t stream);

// Queues `decision` alone.
cudaError_t enqueue_loop_decision(int64_t* state, int64_t length, const LoopDecision& decision,
                                  cudaStream_t stream);

}  // namespace sluice::cuda
