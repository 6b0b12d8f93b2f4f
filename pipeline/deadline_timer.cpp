// A thread that calls a function once a deadline passes (pipeline/detail/deadline_timer.h).

#include <sluice/pipeline/detail/deadline_timer.h>

#include <utility>

namespace sluice {

DeadlineTimer::DeadlineTimer(std::function<bool()> fire)
    : fire_(std::move(fire)), thread_([this] { loop(); }) {}

DeadlineTimer::~DeadlineTimer() { stop(); }

void DeadlineTimer::arm(Clock::time_point at) {
  bool sooner = false;
  {
    std::lock_guard lock(mutex_);
    sooner = !due_ || at < *due_;
    due_ = at;
  }
  if (sooner) wake_.notify_one();
}

bool DeadlineTimer::stop() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  std::lock_guard lock(mutex_);
  return sent_;
}

void DeadlineTimer::loop() {
  std::unique_lock lock(mutex_);
  while (!quit_) {
    if (!due_) {
      wake_.wait(lock);
      continue;
    }
    if (Clock::now() < *due_) {
      wake_.wait_until(lock, *due_);
      continue;
    }
    due_.reset();
    lock.unlock();
    const bool sent = fire_();
    lock.lock();
    sent_ = sent_ || sent;
  }
}

}  // namespace sluice
