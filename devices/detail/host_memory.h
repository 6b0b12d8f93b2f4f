#pragma once
// Host memory for buffers and per-run arenas, the host backend's and the
// staging of other backends' transfers: 64-byte aligned (a cache line,
// and the widest vector load), taken from a pool of freed blocks of the same
// size class. Fresh allocation of a large block costs about 5x the arithmetic
// done in it (page faults on first touch); a block that goes back to the pool
// is handed out again already faulted in, so steady-state streaming allocates
// nothing from the system.
// Thread safety: every function may be called from any thread; a block may be
// released on a thread other than the one that took it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace sluice {

inline constexpr size_t kHostAlignment = 64;

// `bytes` rounded up to whole kHostAlignment blocks, at least one: what a
// value takes in a run's scratch memory, so that the next one stays aligned.
inline int64_t host_aligned_size(int64_t bytes) {
  constexpr auto a = static_cast<int64_t>(kHostAlignment);
  return std::max<int64_t>(a, (bytes + a - 1) / a * a);
}

// The bytes of the block host_allocate hands out for `bytes`: multiples of
// 64 up to 1 KiB, then four classes per power of two, so that a block is at
// most 25% larger than asked for (the shared-memory pool uses the same classes).
size_t host_block_bytes(size_t bytes);

// A block of at least `bytes` (at least one cache line, even for 0), aligned
// to kHostAlignment. It returns to the pool when the last owner lets go.
std::shared_ptr<void> host_allocate(size_t bytes);

struct HostMemoryStats {
  size_t system_allocations = 0;  // blocks ever taken from the system
  size_t system_bytes = 0;        // bytes held from the system now: in use plus pooled
  size_t pooled_bytes = 0;        // bytes of free blocks waiting in the pool
};
HostMemoryStats host_memory_stats();

// Host memory a device reads by DMA: a backend that copies from host memory
// (a GPU) pins the pool's large blocks, so that its copies from them run
// asynchronously at the bus's speed and need no staging. `pin` is called once
// for each block of kPinnedBlockBytes or more as the pool hands it out (a
// block taken earlier is pinned when it is handed out again), `unpin` before
// a pinned block goes back to the system. Set by the backend, once.
struct HostPinning {
  void (*pin)(void* block, size_t bytes) = nullptr;
  void (*unpin)(void* block) = nullptr;
};
inline constexpr size_t kPinnedBlockBytes = size_t{1} << 20;
void pin_host_memory(HostPinning hooks);

}  // namespace sluice
