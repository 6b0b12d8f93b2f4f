#pragma once
// The inside of a Pipeline: the nodes as built, and the oneTBB graph made
// from them when it starts. Only pipeline*.cpp include this.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <tbb/flow_graph.h>
#include <tbb/task_arena.h>

#include "pipeline/checkpoints.h"
#include "pipeline/pipeline.h"

namespace sluice {

using Clock = std::chrono::steady_clock;

// What travels on an edge.
struct Message {
  uint64_t seq = 0;
  Tensors tensors;
  bool skipped = false;           // dropped by ErrorPolicy::Skip: passes through so sequencers move on
  std::shared_ptr<void> credit;   // returns the source's credit when the last copy is gone
  Clock::time_point born;
  int64_t barrier = 0;  // checkpoint barrier before this message, 0: none (checkpoints.h)
};

// A source's credit: how many of its messages may be in flight. Released by
// the last copy of each message, possibly after the graph is torn down, so
// releasing is switched off before that.
struct Credit {
  std::atomic<bool> live{true};
  // Cleared when the run stops early: a message let go after that was
  // dropped, not finished with.
  std::atomic<bool> finishing{true};
  std::function<void()> release;
};

struct NodeRec {
  enum class Kind { Source, Stage, Sink };
  Kind kind;
  std::string name;
  std::shared_ptr<Source> source;
  std::shared_ptr<Sink> sink;
  std::function<Function(const std::vector<Spec>&)> tracer;
  StageOptions options;
  std::optional<Step> step;
  Tensors acc;                    // touched only by the serial node of the stage
  std::vector<int> inputs, outputs;
  // Its messages are promised in sequence order: no stage up to it has
  // `ordered` off. Set when the pipeline is checked.
  bool keeps_order = true;
  int component = 0;        // connected part of the graph it is in
  uint64_t seq_offset = 0;  // restored: its messages' numbers go on from the checkpoint's position
  NodeCounters counters;

  // Live updates (Pipeline::update): each version of a stage applies from
  // the message a barrier was placed on; older messages keep the one before.
  struct Version {
    Step step;
    uint64_t from_seq = 0;
    Tensors acc;  // the accumulator it starts with; empty: the one it finds
    std::shared_ptr<const Version> before;
  };
  std::mutex version_mutex;                // guards the two below
  std::shared_ptr<const Version> version;  // newest; null: `step` alone
  std::vector<Version> waiting;            // updates for the next barrier
  std::atomic<bool> updated{false};
  Tensors acc_init;  // the newest accumulator value given (options.acc, then updates)

  // The step for message `seq`; a stateful stage passes its accumulator,
  // which a version starting at `seq` with an accumulator replaces.
  const Step& step_for(uint64_t seq, Tensors* stage_acc);

  // Output specs, known once a stage is traced.
  std::optional<std::vector<Spec>> out_spec() const;
  const char* kind_name() const;
};

// A snapshot of an accumulator: host copies, since the next step donates
// (overwrites) the buffers the stage holds.
Tensors host_copies(const Tensors& acc);

struct Pipeline::Impl {
  PipelineOptions options;
  std::vector<std::unique_ptr<NodeRec>> nodes;

  // ---- the run
  // Each pipeline's graph runs in an arena of its own (sharing oneTBB's
  // workers): two pipelines of one process waiting in one arena could each
  // end up waiting for the other, and a run hung (seen with a sink pipeline
  // feeding a source pipeline in one process).
  tbb::task_arena arena{tbb::task_arena::automatic, 1};
  std::unique_ptr<tbb::flow::graph> graph;
  std::vector<std::shared_ptr<void>> graph_nodes;   // oneTBB nodes, owned here
  std::vector<tbb::flow::sender<Message>*> exits;   // per node: what its successors connect to
  std::vector<std::vector<tbb::flow::receiver<Message>*>> entries;  // per node: one per input
  std::vector<std::shared_ptr<Credit>> credits;
  // What sets the sources going, run once every edge exists: a message
  // put into a node before its edges are made would be dropped.
  std::vector<std::function<void()>> starters;
  // Per push source: lets the graph finish once the source is closed or
  // stopped (idempotent; every one has run by the time the graph is drained).
  std::vector<std::function<void()>> push_holds;
  std::thread waiter;               // drains the graph for start(); run() drains on its caller
  std::unique_ptr<CheckpointCoordinator> checkpoints;
  std::optional<Checkpoint> restored;  // what restore() found
  bool validated = false;
  bool started = false;
  bool drained = false;

  std::mutex mutex;                 // guards what follows
  bool stopping = false;
  std::string first_error;
  bool cancelled = false;

  void validate_and_trace();
  void apply_checkpoint(const Checkpoint& c, const std::string& where);
  void start_checkpoints();
  void install_updates(int component, uint64_t seq);
  void update(const std::string& stage, StageUpdate change);
  void build_graph();
  void report_error(const NodeRec& node, uint64_t seq, const std::string& what);
  void launch();
  void stop_sources();
  void drain();
  PipelineResult collect();
};

}  // namespace sluice
