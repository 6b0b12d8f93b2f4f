#include <sluice/devices/cpu/thread_pool.h>

#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/task.h>
#include <tbb/task_arena.h>

#include <mutex>
#include <optional>

extern "C" void openblas_set_num_threads(int num_threads);

namespace sluice::cpu {
namespace {

// Every slot of the arena is for workers: a computation is enqueued and its
// caller parks on the result, so no caller takes a slot kept for it, and
// with one kept, one core stayed idle (an FFT or a fused chain ran at half
// speed on two cores). oneTBB also starts one worker fewer than there are
// cores, counting on a caller to take part: one more is allowed, unless
// the application set oneTBB's parallelism itself, which then stands
// (oneTBB takes the lowest of the limits set, so one of ours could lower it).
struct Pool {
  int cores = tbb::this_task_arena::max_concurrency();
  std::optional<tbb::global_control> workers;
  tbb::task_arena arena{cores, /*reserved_for_masters=*/0};
  Pool() {
    const size_t limit = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
    if (limit == static_cast<size_t>(tbb::info::default_concurrency()))
      workers.emplace(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(cores) + 1);
  }
};

tbb::task_arena& arena() {
  // Never destroyed: buffers and pending runs may outlive static destruction.
  static auto* pool = new Pool();
  return pool->arena;
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
