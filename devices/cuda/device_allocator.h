#pragma once
// The caching device allocator: what ClientOptions::preallocate and
// memory_fraction mean for a GPU. It takes regions of device memory from a
// DeviceMemory (cudaMalloc in the backend, a fake in its tests: no CUDA
// here) and cuts buffers out of them, best fit, 256-byte aligned; a freed
// buffer merges with free neighbours and is kept for reuse, since cudaMalloc
// and cudaFree cost far more than a buffer's computation and synchronise the
// device.
//   - preallocate: one region of the whole limit, reserved when the client
//     starts (a DeviceError then if the device lacks it); nothing more is
//     ever taken.
//   - otherwise: regions of at least kRegionBytes as needed, up to the limit;
//     when a request would pass it, regions no buffer uses are given back
//     first.
// A request past the limit is a DeviceError naming the request, the limit
// and what is in use. Freeing only returns memory to the allocator: the
// backend frees a buffer once no queued work uses it.
// Thread safety: every member may be called from any thread.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace sluice::cuda {

// Raw device memory.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // `bytes` of device memory, or null when the device has no room.
  virtual void* reserve(size_t bytes) = 0;
  virtual void release(void* region) = 0;
  // Total memory of the device, for the limit.
  virtual size_t total() const = 0;
};

struct AllocatorStats {
  size_t limit = 0;     // memory_fraction of the device
  size_t reserved = 0;  // taken from the device, in regions
  size_t in_use = 0;    // handed out in buffers (rounded up)
  size_t regions = 0;
  size_t largest_free = 0;  // the largest buffer that fits without taking more
};

class DeviceAllocator {
 public:
  static constexpr size_t kAlignment = 256;
  static constexpr size_t kRegionBytes = size_t{2} << 20;

  // `who` names the device in errors ("cuda:0").
  DeviceAllocator(DeviceMemory& memory, double memory_fraction, bool preallocate, std::string who);
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // At least `bytes` (one alignment unit for 0), aligned to kAlignment.
  void* allocate(size_t bytes);
  // A pointer allocate() returned; DeviceError for any other.
  void free(void* p);
  // The region (what DeviceMemory reserved) holding the buffer `p`, which
  // allocate() returned and is not freed: what another process opens to
  // reach it (a CUDA IPC handle names a whole allocation). Null for any other pointer.
  struct Span {
    char* begin = nullptr;
    size_t bytes = 0;
  };
  Span region_of(const void* p) const;
  AllocatorStats stats() const;

 private:
  struct Block {
    char* begin;
    size_t bytes;
    bool free;
    Block* prev;  // neighbours in the same region
    Block* next;
    size_t region;
  };
  struct Region {
    char* begin;
    size_t bytes;
    size_t used_blocks;
  };

  void* take(size_t bytes);  // best fit among free blocks, or null
  bool grow(size_t bytes);   // a new region for a request of `bytes`
  void release_unused_regions();
  void insert_free(Block* b);
  void erase_free(Block* b);
  [[noreturn]] void out_of_memory(size_t bytes) const;

  DeviceMemory& memory_;
  const std::string who_;
  const size_t limit_;
  const bool preallocate_;
  mutable std::mutex mutex_;
  std::vector<Region> regions_;                  // by index; a released one has bytes 0
  std::set<std::pair<size_t, char*>> free_;      // (bytes, begin) of free blocks
  std::unordered_map<char*, Block*> by_begin_;   // every block, free or not
  std::vector<std::unique_ptr<Block>> storage_;  // owns the Block records
  std::vector<Block*> spare_;                    // records of merged-away blocks
  size_t reserved_ = 0, in_use_ = 0;
};

}  // namespace sluice::cuda
