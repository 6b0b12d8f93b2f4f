#pragma once
// Event: the readiness of a buffer being computed. Set once (ready or failed),
// waited on by readers, and able to run continuations so that work depending
// on a pending buffer is chained without parking a host thread.
// Work a backend queued on a device (a GPU) also has a DeviceEvent: the point
// in the device's queue after that work, so that more work for that device
// waits there, not on the host; the backend sets the Event itself from a
// host callback when the device gets there (backend_impl.h).
// Thread safety: every member may be called from any thread.

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace sluice {

class DeviceEvent;  // backend_impl.h

class Event {
 public:
  Event() = default;
  explicit Event(std::shared_ptr<const DeviceEvent> device_event) : device_event_(std::move(device_event)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool is_set() const { return state_.load(std::memory_order_acquire) != kPending; }
  bool failed() const { return state_.load(std::memory_order_acquire) == kFailed; }
  // Blocks until set: spins briefly (a hand-off costs ~0.1 us spinning, ~23 us
  // parked), then parks; an event of device work parks at once (its backend
  // sets it when the device is done). Rethrows the error it was failed with.
  void wait() const;
  // The error it failed with, or null.
  std::exception_ptr error() const;

  void set_ready();
  void set_error(std::exception_ptr e);
  // Runs `fn` once the event is set: now, on this thread, if it already is;
  // otherwise on the thread that sets it.
  void then(std::function<void()> fn);
  // Where on a device the work it waits for was queued; null for host work.
  const std::shared_ptr<const DeviceEvent>& device_event() const { return device_event_; }

 private:
  static constexpr int kPending = 0, kReady = 1, kFailed = 2;
  void set(int state);
  std::atomic<int> state_{kPending};
  std::exception_ptr error_;
  std::mutex mutex_;  // guards continuations_ and error_ while pending
  std::vector<std::function<void()>> continuations_;
  std::shared_ptr<const DeviceEvent> device_event_;
};

using EventPtr = std::shared_ptr<Event>;

}  // namespace sluice
