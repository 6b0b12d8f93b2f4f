#pragma once
// What a traced run records (PipelineOptions::trace; pipeline/trace.h):
// events kept in memory as they happen, bounded, and written as one JSON
// file when the run ends. Internal to the pipeline layer.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sluice {

class TraceRecorder;

// How a node's slices join a message's flow: a source starts it, a sink
// ends it, every other node (channel edges included, which carry it to
// another process) is a step of it.
enum class FlowStep : uint8_t { Start, Step, End };

// A node's place in the trace, which its counters point to while a traced
// run runs (NodeCounters::trace): Visit::leave records through it.
struct NodeTrace {
  TraceRecorder* recorder = nullptr;
  uint32_t node = 0;  // its index among the recorder's nodes
  // A message's flow id: seq + flow_base. Its base holds, above bit 40,
  // which source numbered it (0: the pipeline's first node), and below,
  // where a restored run's numbers go on from (its seq_offset).
  uint64_t flow_base = 0;
};

class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  TraceRecorder(std::string path, std::string process, size_t max_events);
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;
  // A node's lane; the recorder keeps its name and kind. `origin`: the
  // source whose numbering its messages carry; `seq_offset`: where a
  // restored run's numbers go on from.
  NodeTrace lane(const std::string& name, const std::string& kind, FlowStep flow, int origin,
                 uint64_t seq_offset);
  // Message `seq` spent [start, end) in the lane's node, on this thread,
  // having waited in its queue since `queued` (unset: not known; the wait
  // is kept from a microsecond up).
  void slice(const NodeTrace& lane, Clock::time_point start, Clock::time_point end, uint64_t seq,
             Clock::time_point queued = {});
  // Checkpoint barrier `number` passed the lane's node now.
  void barrier(const NodeTrace& lane, int64_t number);
  // Writes the file. PipelineError naming it when it cannot be written whole.
  void write();

 private:
  struct Event {
    int64_t ts_ns;
    int64_t dur_ns;     // a slice's; -1: a barrier's instant
    int64_t queued_ns;  // a slice's message in the node's queue since then; 0: not known
    uint64_t seq;       // a slice's message, a barrier's number
    uint32_t node;
  };
  // Each thread records into a list of its own, with no lock and no
  // shared counter per event: the workers of a run would otherwise queue at
  // one lock, or pass one counter's cache line between their cores, at
  // every slice. A list takes its room from the bound in blocks, smaller
  // as the bound comes near, each block memory of its own: a list never
  // moves what it holds, and small blocks come from (and go back to) the
  // heap's free lists, so that a run does not fault in fresh pages for them.
  struct Block {
    std::unique_ptr<Event[]> events;
    size_t size = 0;  // events in it
  };
  struct Events {
    uint32_t tid = 0;  // the thread's, which each of its events names
    std::vector<Block> blocks;
    size_t room = 0;       // events the last block has room for
    uint64_t dropped = 0;  // past the bound
  };
  static constexpr size_t kBlock = 256;
  void record(const Event& e);
  Events& own_events();  // this thread's list, made on its first event
  const std::string path_, process_;
  int fd_ = -1;  // the file, open from the start
  bool written_ = false;
  const size_t max_events_;
  const uint64_t generation_;  // told apart from a recorder before it at the same address
  std::vector<std::string> names_, kinds_;
  std::vector<FlowStep> flows_;
  std::mutex mutex_;  // guards threads_
  std::vector<std::unique_ptr<Events>> threads_;
  std::atomic<uint64_t> granted_{0};            // room given to the threads' lists, up to max_events_
  int64_t monotonic_ns_ = 0, realtime_ns_ = 0;  // read together at start
};

}  // namespace sluice
