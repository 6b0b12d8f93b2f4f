#pragma once
// How many blocks of how many threads a generated kernel runs with: pure
// arithmetic, no CUDA, so it is unit-tested where no GPU is
// (tests/devices/cuda_units_test.cpp).

#include <cstdint>

namespace sluice::cuda {

struct Launch {
  uint32_t grid = 1;   // blocks
  uint32_t block = 1;  // threads per block
};

// Threads a block of a generated kernel has: eight warps keep enough loads in
// flight per multiprocessor for a memory-bound loop, and the reduction
// kernels' shared arrays are sized for it (kernel_source.cpp).
inline constexpr uint32_t kBlockThreads = 256;

// A grid-stride loop over `n` items: a thread per item while that keeps the
// GPU busy, else `blocks_per_sm` blocks per multiprocessor (two waves of
// eight resident blocks), each thread looping. Measured on an H100 with a
// fused chain over 256M f32: a block per 256 items (a million blocks) ran at
// 1.7 TB/s, the block scheduler its bound; 32 blocks per multiprocessor at
// 2.3 TB/s; a copy at 2.9.
Launch loop_launch(int64_t n, int multiprocessors, int blocks_per_sm = 16);

// A reduction of `outputs` results over `reduced` elements each: a block per
// result when its elements are many and either lie together in memory (the
// block's threads read neighbours) or the results are too few to keep the
// GPU busy a thread each; else a thread per result (neighbouring threads
// then read neighbouring elements). `contiguous`: the input's innermost axis
// is among those reduced.
struct ReduceLaunch {
  Launch launch;
  bool block_per_output = false;
};
ReduceLaunch reduce_launch(int64_t outputs, int64_t reduced, bool contiguous, int multiprocessors);

// A loop of blocks over `items`, each a block's work (a window tile, a
// convolution's plane): a block per item up to `blocks_per_sm` per
// multiprocessor, then blocks looping. Sixteen, as measured on an H200:
// window_sum's tiles ran 12% faster than with eight and 15% than with
// four, im2col's planes 7% and 13%.
Launch block_loop_launch(int64_t items, int multiprocessors, int blocks_per_sm = 16);

// Windows along a long last axis share most of their inputs, so a block
// reduces a tile of consecutive windows of one line, each input loaded into
// shared memory once per tile (kernels/algorithms.cuh, window_tiles): at
// most kWindowTile windows and a span of kWindowSpan inputs a tile.
inline constexpr int64_t kWindowTile = 4 * int64_t{kBlockThreads}, kWindowSpan = 2048;

// The windows a tile takes, for a line of `windows` windows of `window`
// inputs each `stride` apart along the last axis; 0 where windows do not
// overlap (nothing to share), where a line has under a block's worth of
// them, or where a block's worth would not fit the span: a thread per
// window then.
int64_t window_tile(int64_t windows, int64_t window, int64_t stride);

}  // namespace sluice::cuda
