#pragma once
// A wait that does not hold a oneTBB thread. A node's body that must wait
// (a channel sink with no room to send) would otherwise keep the thread
// running it, and a pipeline whose every thread waits so runs nothing
// else: a source another process waits for starves, and the processes
// wait on each other for good. Here the body's task is suspended, its
// thread goes on with the pipeline's other work, and a thread of the
// waiter's own waits in its place, then resumes the task. Internal.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace sluice {

class OffThreadWait {
 public:
  OffThreadWait() = default;
  ~OffThreadWait();
  OffThreadWait(const OffThreadWait&) = delete;
  OffThreadWait& operator=(const OffThreadWait&) = delete;

  // Runs `wait` (which blocks, boundedly) and returns what it returns, or
  // throws what it throws: on this waiter's thread while the calling task
  // is suspended, when called from a oneTBB task; on the calling thread
  // otherwise. One call at a time.
  bool run(const std::function<bool()>& wait);

 private:
  void serve();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> job_;  // the one waiting to run
  bool stopping_ = false;
  std::thread thread_;  // started at the first wait off a task's thread
};

}  // namespace sluice
