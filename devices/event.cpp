#include <sluice/devices/event.h>

#include <thread>

namespace sluice {

void Event::wait() const {
  // A short spin catches hand-offs that complete within microseconds without
  // paying the ~23 us of a parked thread's wake-up. Device work takes longer
  // than that: spinning would only burn a core the host could use.
  const int spins = device_event_ ? 0 : 2000;
  for (int i = 0; i < spins && state_.load(std::memory_order_acquire) == kPending; ++i) {
    if (i > 100) std::this_thread::yield();
  }
  int s;
  while ((s = state_.load(std::memory_order_acquire)) == kPending) state_.wait(kPending, std::memory_order_acquire);
  if (s == kFailed) std::rethrow_exception(error_);
}

std::exception_ptr Event::error() const {
  return state_.load(std::memory_order_acquire) == kFailed ? error_ : nullptr;
}

void Event::set_ready() { set(kReady); }

void Event::set_error(std::exception_ptr e) {
  {
    std::lock_guard lock(mutex_);
    error_ = std::move(e);
  }
  set(kFailed);
}

void Event::set(int state) {
  std::vector<std::function<void()>> run;
  {
    std::lock_guard lock(mutex_);
    state_.store(state, std::memory_order_release);
    run.swap(continuations_);
  }
  state_.notify_all();
  for (auto& fn : run) fn();
}

void Event::then(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    if (state_.load(std::memory_order_acquire) == kPending) {
      continuations_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

}  // namespace sluice
