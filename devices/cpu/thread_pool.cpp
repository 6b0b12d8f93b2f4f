#include <sluice/devices/cpu/thread_pool.h>

#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/task.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include <sluice/base/error.h>
#include <sluice/devices/backend.h>
#include <sluice/devices/cpu/kernels/blas_library.h>

namespace sluice::cpu {
namespace {

// Set on sluice's runners: what they run is work of the arena, as a oneTBB
// task's is (in_tbb_task), though oneTBB gives it no task context.
thread_local bool t_runner = false;

int worker_limit() {
  return static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

// A run handed off (enqueue) goes to one of sluice's own threads, a
// runner, which joins the arena to run it: the arena keeps one slot for a
// runner and fills the rest with oneTBB workers, as many as oneTBB's limit
// in force lets it have. oneTBB's default limit counts one thread that
// joins besides its workers (cores - 1 of them), so with the process left
// as it was every core works on a run's parallel parts. (The arena once
// took only workers, its callers parking on the result: one core idled
// unless the process-wide limit was raised.) A runner with nothing to run
// sleeps on a condition variable: an idle process spins nothing of its own.
struct Pool {
  int threads = 0;
  std::optional<tbb::global_control> workers;
  tbb::task_arena arena;
  std::mutex mutex;
  std::condition_variable work;
  std::deque<std::function<void()>> queue;  // guarded by mutex
  int sleeping = 0;                         // runners waiting on `work`; guarded by mutex
  std::atomic<size_t> queued{0};            // queue.size(), read without the mutex
  std::atomic<int> spinning{0};             // runners looking for work without the mutex
  // How long a runner that ran dry looks for more before it sleeps: a
  // caller handing off runs one after another (a loop over a stream's
  // chunks, waiting on each) finds it awake, where waking a sleeping thread
  // costs tens of microseconds. Briefly: a caller that waits on each run
  // hands off the next within a few microseconds, and a longer spin takes
  // a core from whatever else the machine runs. Measured on 2 cores, a loop
  // of compiled adds of 16K floats: 1.9-3.2 us a call with 10 or 50 us,
  // 6-16 us with no spin; a 64 KiB message computed into shared memory for
  // another process (shm_ipc_64KiB): 13-21 us with 10 us, 25-53 us with 50.
  static constexpr std::chrono::microseconds kSpin{10};

  explicit Pool(const ClientOptions& options) {
    const int cores = tbb::info::default_concurrency();
    threads = options.host_threads > 0 ? options.host_threads : cores;
    // The limit counts the runner besides the workers. oneTBB obeys the
    // lowest limit set, so setting one only when it is higher leaves a
    // higher limit of the application's standing.
    if (options.raise_worker_limit && worker_limit() < threads)
      workers.emplace(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
    if (options.blas_threads > 0) blas().openblas_set_num_threads(options.blas_threads);
    arena.initialize(threads, /*reserved_for_masters=*/1);
    // As many runners as the arena has threads: runs handed off together
    // each start at once, one on the runner's slot and the others on
    // workers (a runner that finds the slot taken has its run executed by
    // the arena's workers while it waits).
    for (int i = 0; i < threads; ++i) std::thread([this] { run_forever(); }).detach();
  }

  void run_forever() {
    t_runner = true;
    for (;;) {
      spinning.fetch_add(1);
      const auto until = std::chrono::steady_clock::now() + kSpin;
      while (queued.load(std::memory_order_relaxed) == 0 && std::chrono::steady_clock::now() < until) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      }
      // No longer spinning before the mutex: a run handed off from now on
      // wakes this runner if it sleeps, or is found by it under the mutex.
      spinning.fetch_sub(1);
      std::function<void()> fn;
      {
        std::unique_lock lock(mutex);
        ++sleeping;
        work.wait(lock, [this] { return !queue.empty(); });
        --sleeping;
        fn = std::move(queue.front());
        queue.pop_front();
        queued.store(queue.size(), std::memory_order_relaxed);
      }
      arena.execute(fn);
    }
  }

  void enqueue(std::function<void()> fn) {
    bool wake = false;
    {
      std::lock_guard lock(mutex);
      queue.push_back(std::move(fn));
      queued.store(queue.size(), std::memory_order_relaxed);
      // Runners spinning take what is queued without being woken.
      wake = sleeping > 0 && queue.size() > static_cast<size_t>(spinning.load());
    }
    if (wake) work.notify_one();
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

void enqueue(std::function<void()> fn) { pool().enqueue(std::move(fn)); }

bool in_tbb_task() { return t_runner || tbb::task::current_context() != nullptr; }

int thread_pool_concurrency() { return pool().threads; }

}  // namespace sluice::cpu
