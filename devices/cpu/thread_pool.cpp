#include "devices/cpu/thread_pool.h"

#include <tbb/task.h>
#include <tbb/task_arena.h>

#include <mutex>

extern "C" void openblas_set_num_threads(int num_threads);

namespace sluice::cpu {
namespace {

tbb::task_arena& arena() {
  // Never destroyed: buffers and pending runs may outlive static destruction.
  static auto* a = new tbb::task_arena();
  return *a;
}

}  // namespace

void start_thread_pool() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Each BLAS call runs on the thread that makes it; cores are shared out
    // by oneTBB, not by a second pool competing with it.
    openblas_set_num_threads(1);
    arena().initialize();
  });
}

bool stays_on_caller(int64_t elements) {
  return elements < kSmallWorkElements || thread_pool_concurrency() == 1;
}

void enqueue(std::function<void()> fn) {
  start_thread_pool();
  arena().enqueue(std::move(fn));
}

bool in_tbb_task() { return tbb::task::current_context() != nullptr; }

int thread_pool_concurrency() {
  static const int n = (start_thread_pool(), arena().max_concurrency());
  return n;
}

}  // namespace sluice::cpu
