#pragma once
// The inside of a Pipeline: its nodes and edges as built, and the oneTBB
// graph made from them when it starts. Only pipeline*.cpp include this.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <tbb/task_arena.h>

#include <sluice/pipeline/detail/checkpoints.h>
#include <sluice/pipeline/detail/meeting.h>
#include <sluice/pipeline/detail/metrics_server.h>
#include <sluice/pipeline/detail/trace_recorder.h>
#include <sluice/pipeline/node.h>
#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/run_log.h>

namespace sluice {

// One node as a picture of the graph shows it (pipeline_picture.cpp): as it
// stands in the pipeline's slots, its outputs (slot indices), and the specs
// they carry as resolved so far ("" where unknown, or for a node with no output).
struct DrawnNode {
  std::string name, kind, process;
  std::vector<int> outputs;
  std::string carries;  // "f32[16][1024], s64"
};

struct Pipeline::Impl {
  // One node and where it stands in the graph.
  struct Slot {
    std::unique_ptr<PipelineNode> node;
    std::string process;               // where it runs (PartitionOptions); empty: here
    std::vector<int> inputs, outputs;  // slot indices, in connect order
    // Its messages are promised in sequence order: no node up to it
    // reorders. Set when the pipeline is checked.
    bool keeps_order = true;
    int component = 0;        // connected part of the graph it is in
    uint64_t seq_offset = 0;  // restored: its messages' numbers go on from the checkpoint's position
    // Shared: a node after it passes its outputs to another process of this
    // host by reference (PipelineNode::input_memory; analyse() sets it).
    OutputMemory output_memory = OutputMemory::Default;
    std::unique_ptr<NodeContext> context;  // while it runs (a RunContext)
    bool edge = false;  // a channel to another process of a partitioned pipeline (partition.cpp)
    // The source whose numbering its messages carry (a node's index in the
    // whole pipeline, every process's part included): a trace tells the
    // flows of two sources' messages, numbered alike, apart by it.
    int flow_origin = -1;
  };

  PipelineOptions options;
  // This pipeline's number, in every NodeId it gives: one of another
  // pipeline (whose index may well exist here) is refused.
  const uint64_t id = next_id();
  static uint64_t next_id() {
    static std::atomic<uint64_t> ids{1};
    return ids.fetch_add(1);
  }
  std::vector<Slot> slots;

  // ---- the run
  // Each pipeline's graph runs in an arena of its own (sharing oneTBB's
  // workers): two pipelines of one process waiting in one arena could each
  // end up waiting for the other, and a run hung (seen with a sink pipeline
  // feeding a source pipeline in one process).
  tbb::task_arena arena{tbb::task_arena::automatic, 1};
  std::unique_ptr<tbb::flow::graph> graph;
  std::vector<std::shared_ptr<void>> graph_nodes;  // oneTBB nodes, owned here
  std::vector<std::shared_ptr<Credit>> credits;
  // The run is over: credits no longer reach the graph (a release under way
  // is waited out), and what they set going before has ended.
  void end_credits();
  // What sets the sources going, run once every edge exists: a message
  // put into a node before its edges are made would be dropped.
  std::vector<std::function<void()>> starters;
  // Let the graph's wait return once nothing more can come from outside
  // it (idempotent; every one has run by the time the graph is drained).
  std::vector<std::function<void()>> holds;
  std::thread waiter;  // drains the graph for start(); run() drains on its caller
  std::unique_ptr<Meeting> meeting;  // partitioned: held while it runs
  std::unique_ptr<CheckpointCoordinator> checkpoints;
  std::optional<Checkpoint> restored;  // what restore() found
  bool validated = false;
  bool started = false;
  bool drained = false;

  // ---- metrics
  Pipeline* owner = nullptr;                      // whose metrics the server serves
  std::unique_ptr<MetricsServer> metrics_server;  // PipelineOptions::metrics_port
  int metrics_port = 0;
  // What the windowed rates are reckoned from: each node's messages and
  // bytes out, sampled by metrics().
  struct RateSample {
    Clock::time_point at;
    std::vector<std::pair<uint64_t, uint64_t>> out;
  };
  std::mutex rate_mutex;  // guards rate_samples
  std::deque<RateSample> rate_samples;
  void serve_metrics();  // binds the port, before the run starts
  void add_rates(std::vector<NodeMetrics>& metrics);

  // ---- trace (PipelineOptions::trace; pipeline/trace.h)
  std::unique_ptr<TraceRecorder> trace;  // made when the run starts
  std::vector<NodeTrace> lanes;          // each slot's, which its counters point to
  void start_trace();
  void write_trace();

  // ---- run log (PipelineOptions::run_log; pipeline_run_log.cpp)
  std::shared_ptr<RunLog> run_log;  // opened with the Pipeline
  std::thread run_log_thread;       // a "metrics" record every run_log_every
  std::mutex run_log_mutex;         // guards run_log_stop
  std::condition_variable run_log_wake;
  bool run_log_stop = false;
  std::exception_ptr run_log_failure;  // the first record not written; read once the thread is joined
  void open_run_log();
  void start_run_log();
  // Ends the thread; `last`: writes a closing snapshot first (wait(), not
  // the destructor, which must not throw).
  void stop_run_log(bool last);
  void log_metrics();

  std::mutex mutex;  // guards what follows
  bool stopping = false;
  std::string first_error;
  std::exception_ptr first_cause;  // what the node that failed first threw
  bool fatal = false;              // first_error ends the run whatever the error policy (abort)
  bool cancelled = false;

  Slot& slot(int index) { return slots[static_cast<size_t>(index)]; }
  std::string describe(int index) const;  // "stage 'name'"
  NodeId add(std::unique_ptr<PipelineNode> node, std::string process);
  void validate_and_trace();
  // Checks that every node is connected and resolves each one's specs from
  // its producers', in topological order (tracing the stages).
  void resolve_specs();
  std::vector<int> topological_order() const;  // PipelineError naming a cycle
  // Per source slot, the inputs of nodes watching their inputs' ends
  // (PipelineNode::watches_input_ends) that its stream reaches with its
  // numbers kept: (node, input), told when it ends.
  std::vector<std::vector<std::pair<int, size_t>>> ends_watched;
  void watch_ends();
  void source_ended(int source, uint64_t messages);
  // Each node's flow_origin: a source's is itself, any other node's its first input's.
  void set_flow_origins();
  void analyse();                              // order and connected parts of the graph as it will run
  // What a picture of the graph shows (DrawnNode), one per slot.
  std::vector<DrawnNode> drawing() const;
  // The graph as DOT, or Mermaid's flowchart: Pipeline::to_dot, to_mermaid.
  std::string picture(bool mermaid);
  // The run log's "graph" record: the whole program's drawing, written when
  // the run starts, before partitioning (pipeline_run_log.cpp).
  void log_graph();
  // This process's part of a partitioned pipeline (partition.cpp): the
  // other processes' nodes go, and edges to them become channels.
  void partition();
  std::string description() const;
  void apply_checkpoint(const Checkpoint& c, const std::string& where);
  void start_checkpoints();
  void update(const std::string& stage, StageUpdate change);
  void build_graph();
  void report_error(int node, uint64_t seq, const std::string& what, std::exception_ptr cause = nullptr);
  // Node `node` cannot go on (NodeContext::abort): the run stops and wait() throws `what`.
  void abort(int node, const std::string& what);
  void launch();
  void stop_sources();
  void drain();
  PipelineResult collect();
};

}  // namespace sluice
