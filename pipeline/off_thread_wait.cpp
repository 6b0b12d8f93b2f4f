// A wait that does not hold a oneTBB thread (pipeline/detail/off_thread_wait.h).

#include <sluice/pipeline/detail/off_thread_wait.h>

#include <exception>

#include <tbb/task.h>
#include <tbb/task_arena.h>

namespace sluice {

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
