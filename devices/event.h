#pragma once
// Event: the readiness of a buffer being computed. Set once (ready or failed),
// waited on by readers, and able to run continuations so that work depending
// on a pending buffer is chained without parking a host thread.
// Thread safety: every member may be called from any thread.

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace sluice {

class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool is_set() const { return state_.load(std::memory_order_acquire) != kPending; }
  bool failed() const { return state_.load(std::memory_order_acquire) == kFailed; }
  // Blocks until set: spins briefly (a hand-off costs ~0.1 us spinning, ~23 us
  // parked), then parks. Rethrows the error the event was failed with.
  void wait() const;
  // The error it failed with, or null.
  std::exception_ptr error() const;

  void set_ready();
  void set_error(std::exception_ptr e);
  // Runs `fn` once the event is set: now, on this thread, if it already is;
  // otherwise on the thread that sets it.
  void then(std::function<void()> fn);

 private:
  static constexpr int kPending = 0, kReady = 1, kFailed = 2;
  void set(int state);
  std::atomic<int> state_{kPending};
  std::exception_ptr error_;
  std::mutex mutex_;  // guards continuations_ and error_ while pending
  std::vector<std::function<void()>> continuations_;
};

using EventPtr = std::shared_ptr<Event>;

}  // namespace sluice
