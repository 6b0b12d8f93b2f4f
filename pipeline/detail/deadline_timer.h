#pragma once
// A thread that calls a function once a deadline passes: what a node uses
// to act when no message comes (a batch's timeout, a stream gone idle
// before an event window or a zip). Internal to the pipeline layer.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace sluice {

class DeadlineTimer {
 public:
  using Clock = std::chrono::steady_clock;
  // Starts the thread; `fire` runs on it once a deadline armed passes,
  // with no lock of the timer's held (it may arm again), and says whether
  // it sent anything into the graph.
  explicit DeadlineTimer(std::function<bool()> fire);
  ~DeadlineTimer();  // stop()
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;
  // Fires at `at` (the deadline armed before, if any, is replaced). A
  // later deadline wakes nothing: the thread finds it moved when it wakes,
  // so that arming at every message costs no system call.
  void arm(Clock::time_point at);
  // Ends the thread, waiting for a fire under way (but from `fire`
  // itself): nothing fires once it returns. Whether a fire sent anything:
  // a node that stops it as the graph drains waits for that too.
  bool stop();

 private:
  void loop();
  std::function<bool()> fire_;
  std::mutex mutex_;  // guards what follows
  std::condition_variable wake_;
  std::optional<Clock::time_point> due_;
  bool quit_ = false;
  bool sent_ = false;   // a fire sent something
  std::thread thread_;  // last: it starts once the rest is made
};

}  // namespace sluice
