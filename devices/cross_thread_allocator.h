#pragma once
// Memory for what is made on one thread and let go on another: a message's
// tags, which its source makes and its sink (another worker) frees. With
// glibc's malloc such a block goes back under its arena's lock, which the
// thread that made it takes for its own allocations: two threads passing
// messages to each other slept on that lock (futex waits under free, whole
// runs twice as long). Behind this allocator is oneTBB's, which takes a
// block freed elsewhere back without that lock. It costs a little more than
// malloc on one thread: a tensor's buffer, made and freed by one call as
// often as not, stays with malloc (run_overhead_add4 was 15-30 ns slower).
//
//   std::vector<Tag, CrossThreadAllocator<Tag>> tags;
//   auto held = std::allocate_shared<Held>(CrossThreadAllocator<Held>());

#include <cstddef>
#include <new>

namespace sluice {

// At least `bytes` (aligned for any object up to 16 bytes); std::bad_alloc
// when there is no memory.
void* cross_thread_allocate(size_t bytes);
void cross_thread_free(void* p) noexcept;

template <typename T>
struct CrossThreadAllocator {
  static_assert(alignof(T) <= 16, "cross_thread_allocate aligns to 16 bytes");
  using value_type = T;
  CrossThreadAllocator() noexcept = default;
  template <typename U>
  CrossThreadAllocator(const CrossThreadAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(cross_thread_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) noexcept { cross_thread_free(p); }
  template <typename U>
  bool operator==(const CrossThreadAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace sluice
