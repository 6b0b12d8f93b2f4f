#include <sluice/devices/cpu/thread_pool.h>

#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/task.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>

#include <sluice/devices/backend.h>
#include <sluice/base/error.h>

extern "C" void openblas_set_num_threads(int num_threads);

namespace sluice::cpu {
namespace {

int worker_limit() {
  return static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

// Every slot of the arena is for workers: a computation is enqueued and its
// caller parks on the result, so no caller takes a slot kept for it, and
// with one kept, one core stayed idle. Filling every slot takes one oneTBB
// worker per slot, one more than oneTBB starts by default: raised only when
// the options ask (raise_worker_limit in backend.h says why).
struct Pool {
  int threads = 0;
  std::optional<tbb::global_control> workers;
  tbb::task_arena arena;

  explicit Pool(const ClientOptions& options) {
    const int cores = tbb::info::default_concurrency();
    // The limit counts the thread that would join the arena besides the
    // workers. oneTBB obeys the lowest limit set, so setting one only when
    // it is higher leaves a higher limit of the application's standing.
    const int wanted = (options.host_threads > 0 ? options.host_threads : cores) + 1;
    if (options.raise_worker_limit && worker_limit() < wanted)
      workers.emplace(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(wanted));
    if (options.blas_threads > 0) openblas_set_num_threads(options.blas_threads);
    if (options.host_threads > 0) {
      threads = options.host_threads;
      arena.initialize(threads, /*reserved_for_masters=*/0);
      return;
    }
    // By default no more slots than there may be workers: for a slot more,
    // oneTBB prints a warning on stderr, and kernels would cut work into a
    // part more than there are threads to take one. Where there may be none
    // (one core), the one slot is kept for a caller, which asks for no
    // worker, and oneTBB still starts one for work enqueued.
    const int workers_allowed = std::min(worker_limit() - 1, cores);
    threads = std::max(workers_allowed, 1);
    arena.initialize(threads, /*reserved_for_masters=*/workers_allowed > 0 ? 0 : 1);
  }
};

// Never destroyed: buffers and pending runs may outlive static destruction.
std::atomic<Pool*> the_pool{nullptr};

Pool& pool() {
  Pool* p = the_pool.load(std::memory_order_acquire);
  // Host computations exist only once the host client, whose backend starts
  // the pool, does.
  if (!p)
    throw InternalError(error_message("cpu thread pool", "used before the host client started it", "", ""));
  return *p;
}

}  // namespace

void start_thread_pool(const ClientOptions& options) {
  static std::once_flag once;
  std::call_once(once, [&] { the_pool.store(new Pool(options), std::memory_order_release); });
}

bool stays_on_caller(int64_t elements) {
  return elements < kSmallWorkElements || thread_pool_concurrency() == 1;
}

void enqueue(std::function<void()> fn) { pool().arena.enqueue(std::move(fn)); }

bool in_tbb_task() { return tbb::task::current_context() != nullptr; }

int thread_pool_concurrency() { return pool().threads; }

}  // namespace sluice::cpu
