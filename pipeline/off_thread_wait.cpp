// A wait that does not hold a oneTBB thread (pipeline/detail/off_thread_wait.h).

#include <sluice/pipeline/detail/off_thread_wait.h>

#include <exception>
#include <utility>

#include <sluice/pipeline/node.h>

#include <tbb/task.h>
#include <tbb/task_arena.h>

namespace sluice {
namespace {
// The WaitingVisit of the body running on this thread; null: none.
thread_local Visit* waiting_visit = nullptr;
}  // namespace

WaitingVisit::WaitingVisit(Visit& visit) { waiting_visit = &visit; }
WaitingVisit::~WaitingVisit() { waiting_visit = nullptr; }

OffThreadWait::~OffThreadWait() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool OffThreadWait::run(const std::function<bool()>& wait) {
  if (tbb::this_task_arena::current_thread_index() == tbb::task_arena::not_initialized) return wait();
  bool result = false;
  std::exception_ptr error;  // what `wait` threw, thrown again in the task
  // Not this thread's while the task is away: it runs other bodies.
  Visit* const visit = std::exchange(waiting_visit, nullptr);
  // The task's stack stays while it is suspended: `wait`, `result` and `error` live.
  tbb::task::suspend([&](tbb::task::suspend_point task) {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { serve(); });
    job_ = [&wait, &result, &error, task] {
      try {
        result = wait();
      } catch (...) { error = std::current_exception(); }
      tbb::task::resume(task);
    };
    changed_.notify_all();
  });
  // On the thread that resumed the task (maybe another).
  waiting_visit = visit;
  if (visit) visit->start = Clock::now();
  if (error) std::rethrow_exception(error);
  return result;
}

void OffThreadWait::serve() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || job_; });
    if (!job_) return;  // stopping, nothing left to resume
    std::function<void()> job = std::move(job_);
    job_ = nullptr;
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace sluice
