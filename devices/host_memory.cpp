#include <sluice/devices/detail/host_memory.h>

#include <tbb/spin_mutex.h>

#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace sluice {
namespace {

// Free blocks beyond this stay with the system: the pool exists to recycle a
// working set, not to hoard memory after a burst.
constexpr size_t kMaxPooledBytes = size_t{1} << 30;

// Size classes: multiples of 64 up to 1 KiB, then four per power of two, so
// a block is at most 25% larger than asked for.
constexpr size_t kSmallLimit = 1024;
constexpr int kSmallClasses = kSmallLimit / kHostAlignment;
constexpr int kClassCount = kSmallClasses + 4 * 64;
constexpr size_t kMaxBlockBytes = size_t{1} << 62;

struct SizeClass {
  int index;
  size_t bytes;
};

SizeClass size_class(size_t bytes) {
  if (bytes <= kSmallLimit) {
    size_t lines = bytes == 0 ? 1 : (bytes + kHostAlignment - 1) / kHostAlignment;
    return {static_cast<int>(lines) - 1, lines * kHostAlignment};
  }
  int k = static_cast<int>(std::bit_width(bytes - 1)) - 1;  // 2^k < bytes <= 2^(k+1), k >= 10
  size_t base = size_t{1} << k, step = base / 4;
  size_t quarters = (bytes - base + step - 1) / step;  // 1..4
  return {kSmallClasses + (k - 10) * 4 + static_cast<int>(quarters) - 1, base + quarters * step};
}

struct FreeBlock {
  void* p;
  bool pinned;
};

struct Bucket {
  tbb::spin_mutex mutex;  // held for a push or a pop: cheaper than parking
  std::vector<FreeBlock> free;
};

class Pool {
 public:
  std::shared_ptr<void> allocate(size_t bytes) {
    if (bytes > kMaxBlockBytes) throw std::bad_alloc();
    SizeClass c = size_class(bytes);
    FreeBlock b = take(c);
    if (!b.p) {
      b.p = std::aligned_alloc(kHostAlignment, c.bytes);
      if (!b.p) throw std::bad_alloc();
      system_allocations_.fetch_add(1, std::memory_order_relaxed);
      system_bytes_.fetch_add(c.bytes, std::memory_order_relaxed);
    }
    // The hooks are read (under their lock) only for a block large enough
    // to pin: a small one is taken and given back on every run.
    if (!b.pinned && c.bytes >= kPinnedBlockBytes) {
      if (const HostPinning hooks = pinning(); hooks.pin) {
        hooks.pin(b.p, c.bytes);
        b.pinned = true;
      }
    }
    return std::shared_ptr<void>(b.p, [this, c, pinned = b.pinned](void* q) { release({q, pinned}, c); });
  }

  void set_pinning(HostPinning hooks) {
    std::lock_guard lock(pinning_mutex_);
    pinning_ = hooks;
  }

  HostMemoryStats stats() const {
    return {system_allocations_.load(std::memory_order_relaxed),
            system_bytes_.load(std::memory_order_relaxed), pooled_bytes_.load(std::memory_order_relaxed)};
  }

 private:
  HostPinning pinning() {
    std::lock_guard lock(pinning_mutex_);
    return pinning_;
  }

  FreeBlock take(SizeClass c) {
    Bucket& b = buckets_[static_cast<size_t>(c.index)];
    std::lock_guard lock(b.mutex);
    if (b.free.empty()) return {nullptr, false};
    FreeBlock p = b.free.back();
    b.free.pop_back();
    pooled_bytes_.fetch_sub(c.bytes, std::memory_order_relaxed);
    return p;
  }

  void release(FreeBlock p, SizeClass c) {
    if (pooled_bytes_.fetch_add(c.bytes, std::memory_order_relaxed) + c.bytes <= kMaxPooledBytes) {
      Bucket& b = buckets_[static_cast<size_t>(c.index)];
      std::lock_guard lock(b.mutex);
      b.free.push_back(p);
      return;
    }
    pooled_bytes_.fetch_sub(c.bytes, std::memory_order_relaxed);
    system_bytes_.fetch_sub(c.bytes, std::memory_order_relaxed);
    if (p.pinned) pinning().unpin(p.p);
    std::free(p.p);
  }

  std::array<Bucket, kClassCount> buckets_;
  tbb::spin_mutex pinning_mutex_;
  HostPinning pinning_;
  std::atomic<size_t> system_allocations_{0}, system_bytes_{0}, pooled_bytes_{0};
};

Pool& pool() {
  // Never destroyed: buffers may be released during static destruction.
  static auto* p = new Pool();
  return *p;
}

}  // namespace

size_t host_block_bytes(size_t bytes) { return size_class(bytes).bytes; }

std::shared_ptr<void> host_allocate(size_t bytes) { return pool().allocate(bytes); }

HostMemoryStats host_memory_stats() { return pool().stats(); }

void pin_host_memory(HostPinning hooks) { pool().set_pinning(hooks); }

}  // namespace sluice
