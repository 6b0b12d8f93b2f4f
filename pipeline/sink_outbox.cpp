// A sink's outbox (pipeline/detail/sink_outbox.h).

#include <sluice/pipeline/detail/sink_outbox.h>

namespace sluice {

SinkOutbox::~SinkOutbox() {
  drop();
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool SinkOutbox::empty() const {
  std::lock_guard lock(mutex_);
  return waiting_.empty() && !running_;
}

void SinkOutbox::push(std::function<void()> work) {
  {
    std::lock_guard lock(mutex_);
    if (dropping_) return;  // `work` goes, unrun, with what it holds
    // The graph's wait holds from the first work waiting to the last done.
    if (waiting_.empty() && !running_) graph_.reserve_wait();
    waiting_.push_back(std::move(work));
    if (!thread_.joinable()) thread_ = std::thread([this] { serve(); });
  }
  changed_.notify_all();
}

void SinkOutbox::drop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard lock(mutex_);
    dropping_ = true;
    dropped.swap(waiting_);
    if (!dropped.empty() && !running_) graph_.release_wait();
  }
  changed_.notify_all();
  dropped.clear();  // outside the lock: what they hold may call back
}

void SinkOutbox::wait_empty() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return waiting_.empty() && !running_; });
}

void SinkOutbox::serve() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return quit_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // quitting, nothing left
    std::function<void()> work = std::move(waiting_.front());
    waiting_.pop_front();
    running_ = true;
    lock.unlock();
    work();
    work = nullptr;  // what it held goes before the graph may drain
    lock.lock();
    running_ = false;
    if (waiting_.empty()) {
      graph_.release_wait();
      changed_.notify_all();
    }
  }
}

}  // namespace sluice
