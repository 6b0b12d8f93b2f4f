#include <sluice/devices/cuda/launch_geometry.h>

#include <algorithm>

namespace sluice::cuda {

// CUDA allows 2^31 - 1 blocks along x; a grid-stride loop needs far fewer.
constexpr int64_t kMaxGrid = (int64_t{1} << 31) - 1;

Launch loop_launch(int64_t n, int multiprocessors, int blocks_per_sm) {
  const int64_t wanted = (std::max<int64_t>(n, 1) + kBlockThreads - 1) / kBlockThreads;
  const int64_t cap = std::clamp<int64_t>(int64_t{multiprocessors} * blocks_per_sm, 1, kMaxGrid);
  return {static_cast<uint32_t>(std::clamp<int64_t>(wanted, 1, cap)), kBlockThreads};
}

ReduceLaunch reduce_launch(int64_t outputs, int64_t reduced, bool contiguous, int multiprocessors) {
  // With a warp or more of elements per result a block shares them well;
  // below that most of a block's threads would idle.
  constexpr int64_t kBlockWorthIt = 32;
  const int64_t busy = int64_t{multiprocessors} * kBlockThreads;  // threads that keep every multiprocessor working
  if (reduced >= kBlockWorthIt && (contiguous || outputs < busy)) {
    const int64_t cap = std::max<int64_t>(1, int64_t{multiprocessors} * 64);
    return {{static_cast<uint32_t>(std::clamp<int64_t>(outputs, 1, std::min(cap, kMaxGrid))), kBlockThreads}, true};
  }
  return {loop_launch(outputs, multiprocessors), false};
}

Launch block_loop_launch(int64_t items, int multiprocessors, int blocks_per_sm) {
  const int64_t cap = std::clamp<int64_t>(int64_t{multiprocessors} * blocks_per_sm, 1, kMaxGrid);
  return {static_cast<uint32_t>(std::clamp<int64_t>(items, 1, cap)), kBlockThreads};
}

int64_t window_tile(int64_t windows, int64_t window, int64_t stride) {
  if (stride <= 0 || stride >= window || window > kWindowSpan || windows < int64_t{kBlockThreads}) return 0;
  const int64_t tile = std::min({kWindowTile, windows, (kWindowSpan - window) / stride + 1});
  return tile >= int64_t{kBlockThreads} ? tile : 0;
}

}  // namespace sluice::cuda
