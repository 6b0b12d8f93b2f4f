#pragma once
// What a sink that may wait for its reader (Sink::waits_for_reader) could
// not take at once, and the thread of its own that hands it over, in order,
// waiting as long as it takes. The pipeline's threads never wait in a sink:
// a pipeline whose every thread did would run nothing else (another source,
// which a reader in another process may be waiting for). While work waits
// here the graph's wait holds, so the graph drains only once the sink has
// taken everything; the messages waiting keep their sources' credit, so
// backpressure still reaches the sources. Internal to the pipeline layer.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include <tbb/flow_graph.h>

namespace sluice {

class SinkOutbox {
 public:
  explicit SinkOutbox(tbb::flow::graph& graph) : graph_(graph) {}
  ~SinkOutbox();  // drop(), then waits for the work under way and ends the thread
  SinkOutbox(const SinkOutbox&) = delete;
  SinkOutbox& operator=(const SinkOutbox&) = delete;

  // Nothing waits and nothing is under way: the caller may use the sink
  // itself. Only the thread that pushes messages may act on it being so.
  bool empty() const;
  // Runs `work` on the outbox's thread after everything pushed before;
  // dropped (destroyed unrun) once drop() was called.
  void push(std::function<void()> work);
  // The run stops early: what waits is dropped, and so is what comes later.
  void drop();
  // Until nothing waits and nothing is under way.
  void wait_empty();

 private:
  void serve();

  tbb::flow::graph& graph_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> waiting_;
  bool running_ = false;  // a work taken from waiting_ is under way
  bool dropping_ = false;
  bool quit_ = false;
  std::thread thread_;  // started at the first push
};

}  // namespace sluice
