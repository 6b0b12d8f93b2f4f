#include <sluice/devices/cross_thread_allocator.h>

#include <tbb/tbb_allocator.h>

namespace sluice {

void* cross_thread_allocate(size_t bytes) {
  return tbb::tbb_allocator<char>().allocate(bytes == 0 ? 1 : bytes);
}

void cross_thread_free(void* p) noexcept {
  if (p) tbb::tbb_allocator<char>().deallocate(static_cast<char*>(p), 0);
}

}  // namespace sluice
