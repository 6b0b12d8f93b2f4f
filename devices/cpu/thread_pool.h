#pragma once
// The CPU backend's one thread pool: a oneTBB arena and sluice's runners,
// threads that join it. Computations that do not run on the caller's thread
// are enqueued here, a runner runs each in the arena, and kernels split
// large work with tbb::parallel_for, which runs in the arena of the task
// that calls it: the runner's and the workers'.
// The arena is sluice's own; settings of the whole process (oneTBB's worker
// limit, OpenBLAS's threads) are changed only when the client's options ask
// (ClientOptions in backend.h), since they belong to the application.
// FFTW is used without fftw_init_threads, so its plans run on the calling
// thread. (FFTW with 2 threads on one small transform is 6x slower than
// with 1: spread rows across cores instead.)
// Thread safety: every function may be called from any thread.

#include <cstdint>
#include <functional>

namespace sluice {
struct ClientOptions;
}

namespace sluice::cpu {

// Below this many elements (read plus written), handing work to another
// thread costs more than doing it: a parked hand-off costs ~23 us, while a
// core streams ~32K floats in a few microseconds.
inline constexpr int64_t kSmallWorkElements = int64_t{32} * 1024;

// Whether work touching `elements` elements should stay on the calling
// thread rather than be split across cores.
bool stays_on_caller(int64_t elements);

// Makes the arena, and the process-wide changes, that `options` ask for
// (host_threads, raise_worker_limit, blas_threads). Called once, when the
// host client is made; a later call does nothing.
void start_thread_pool(const ClientOptions& options);

// Runs `fn` in the arena (on a runner that joins it) and returns at once.
// `fn` must not throw.
void enqueue(std::function<void()> fn);

// Whether the calling thread is executing a oneTBB task (a pipeline stage,
// a flow-graph body, a parallel_for body) or a run on one of sluice's
// runners, where blocking on work enqueued to the arena could starve it:
// such callers run their work inline.
bool in_tbb_task();

// How many threads the arena runs tasks on.
int thread_pool_concurrency();

}  // namespace sluice::cpu
