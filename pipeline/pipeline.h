#pragma once
// Pipelines: compiled stages as nodes of a oneTBB flow graph. Start here.
//
//   sluice::Pipeline p;
//   auto in  = p.source("samples", sluice::sources::range(sluice::to_batched(data, 256)));
//   auto mean = p.stage("mean", [](sluice::Expr x, sluice::Expr acc) {
//                 return sluice::tuple(sluice::sum(x), acc + sluice::sum(x)); },
//               {.input = {sluice::f32({256})}, .acc = {sluice::scalar(0.0f)}});
//   auto out = p.sink("print", [](const sluice::Tensor& t) { std::cout << t << "\n"; });
//   p.connect(in, mean);
//   p.connect(mean, out);
//   sluice::PipelineResult r = p.run();   // blocks until the sources end and all drained
//
// Two nouns: the Pipeline you build (single-threaded: build from one thread),
// and its run (run(), or start() then wait(), from the building thread;
// cancel() and metrics() from any thread while it runs).
//
// Semantics: a stage with an accumulator is a serial node (one message at a
// time, in order, the accumulator donated on its device every step, exactly
// as a Stream's step); a stage without one may run `concurrency` copies at
// once. Messages reach every stage with an accumulator and every sink in
// sequence order (a sequencer restores it) unless a stage on their way has
// `ordered` off.
// Each source may have at most `capacity` messages in the pipeline at once
// (a limiter on its credit), so a slow stage slows the sources and memory
// stays bounded. Fan-out: connect one node to several. Fan-in: connect
// several nodes (2 to 4) to one; their messages are joined by sequence
// number into one message whose tensors follow the connect order.
//
// Checkpoints (PipelineOptions::checkpoint_dir, README "Checkpoints"):
// barriers placed by the sources, snapshots of the accumulators stored by
// a CheckpointStore, restore() to resume after a crash with every message
// processed once, and update() to swap a stage's function or weights live.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <sluice/ops/ops.h>
#include <sluice/pipeline/event_time.h>
#include <sluice/pipeline/metrics.h>
#include <sluice/pipeline/placement.h>
#include <sluice/pipeline/sinks.h>
#include <sluice/pipeline/sources.h>
#include <sluice/stream/step.h>

namespace sluice {

enum class ErrorPolicy : uint8_t {
  Stop,  // the first failing message cancels the run; run() throws PipelineError
  Skip,  // a failing message is dropped and counted; the others go on
};

// How often sources place a checkpoint barrier: every `messages` messages
// of each source, or every `time` (the sources of one connected part of the
// pipeline agree on where). At most one of them; neither: no barriers of
// the pipeline's own (a ZeroMQ source may still bring its upstream's).
struct CheckpointInterval {
  uint64_t messages = 0;
  std::chrono::milliseconds time{0};
  bool set() const { return messages > 0 || time.count() > 0; }
};

// One program, several processes (README, "One program, several
// processes"): each node names the process that runs it, and every process
// runs the same program with its own name. run() then builds this
// process's nodes only; each edge between two processes becomes a reliable
// ZeroMQ channel at the endpoints the placement gives, and before any data
// moves the processes meet (at the placement's first process) and check
// that they all run the same pipeline, specs included.
struct PartitionOptions {
  std::string process{};               // this process; empty: every node runs here
  std::optional<Placement> placement;  // required with `process`
  // How long the processes wait for each other at start, and for a peer
  // that went silent while running, before the run fails.
  std::chrono::milliseconds meet_timeout{60000};
  std::chrono::milliseconds peer_timeout{60000};
};

struct PipelineOptions {
  ErrorPolicy on_error = ErrorPolicy::Stop;
  size_t capacity = 64;  // messages of one source in flight at once

  // ---- checkpoints (README, "Checkpoints")
  // Where checkpoints are stored (a CheckpointStore); empty: barriers, if
  // any, only apply live updates.
  std::string checkpoint_dir{};
  CheckpointInterval checkpoint_interval{};
  int checkpoint_retain = 3;  // complete checkpoints kept
  // Sources that cannot replay but may be restored anyway, starting from
  // wherever they are (at-most-once for their messages).
  std::vector<std::string> at_most_once{};

  PartitionOptions partition{};

  // ---- metrics (README, "Metrics")
  // The `pipeline` label of its metrics; empty: the partition's process,
  // else "pipeline".
  std::string name{};
  // Serves GET /metrics (Prometheus' text format, version 0.0.4) and GET
  // /metrics.json (metrics_json()) over HTTP on this port from start until
  // wait() returns. 0: off; -1: any free port (metrics_port() says which).
  // A port that cannot be bound is a PipelineError naming it, at start.
  int metrics_port = 0;
  std::string metrics_address = "127.0.0.1";  // where it binds: "0.0.0.0" for every interface

  // ---- run log (run_log.h; README, "A run report")
  // Appends JSON Lines to this file, opened when the Pipeline is made (a
  // PipelineError there when it cannot be): from start until wait()
  // returns, every run_log_every a "metrics" record (every node's metrics
  // as metrics_json writes them, under "nodes"), and what the application
  // writes through run_log(). Records name the partition's process, so the
  // processes of one pipeline may share the file. A record that cannot be
  // written cancels the run, and wait() throws that PipelineError. Empty: off.
  std::string run_log{};
  std::chrono::milliseconds run_log_every{250};

  // ---- trace (trace.h; README, "A timeline of every message")
  // Writes this process's timeline to this file, as the Chrome trace event
  // format (Perfetto and chrome://tracing open it) when wait() returns: a
  // slice per node per message, flows that follow each message, checkpoint
  // barriers. The file is created at start (a PipelineError there when it
  // cannot be). At most trace_max_events events are kept; the rest of the
  // run goes unrecorded, counted in the file. Empty: off.
  std::string trace{};
  size_t trace_max_events = size_t{1} << 20;
};

// What a live update replaces in a stage; see Pipeline::update.
struct StageUpdate {
  std::optional<Function> function{};  // same parameters; outputs its consumers accept
  Tensors acc{};  // the new accumulator value (same specs unless the function changes them)
};

// What restore() found.
struct RestoreReport {
  int64_t checkpoint = 0;            // the number restored; 0: none found, the run starts afresh
  std::vector<std::string> skipped;  // newer checkpoints passed over (torn, corrupt): which and why
};

// Dynamic batching (Nx.Serving's batch_size and batch_timeout): a stage
// with size > 0 gathers up to `size` messages, or what came within
// `timeout` of the first of them, into one batch (zero-padded to `size`
// rows) and runs its function once on it; each message goes on with its own
// row of every output. The function is traced on the batch specs (each
// input spec with a leading dimension `size`: f32[16] -> f32[64][16]) and
// must return outputs with that leading dimension. Such a stage needs
// `input` (the specs of one message), takes no accumulator, and its rows
// travel as host tensors. `concurrency` is how many batches run at once
// (Nx.Serving's partitions): a batch whose timeout passes while that many
// run keeps filling until one ends, so that a request waits at most
// `timeout` and two batches' compute while the stage keeps up. It gathers
// messages in sequence order; a source whose `capacity` is below `size`
// cannot fill a batch alone.
struct BatchOptions {
  int64_t size = 0;                         // 0: not batched
  std::chrono::microseconds timeout{1000};  // the longest a partial batch waits for more
};

// What a stage's outputs carry of the tags (devices/tags.h) of the message
// it ran on.
enum class TagRule : uint8_t {
  Carry,  // its input's tags, as they came (a joined input's: every input's, the first's where two say one
          // key)
  Drop,   // none
  Set,    // what StageOptions::set_tags returns
};

struct StageOptions {
  // Specs of one incoming message. Empty: the producers' output specs, in
  // connect order, resolved when the pipeline starts.
  std::vector<Spec> input{};
  Tensors acc{};            // the accumulator's initial value (copied to the device)
  // Where it runs: a device, or platforms in order of preference resolved
  // by the process that runs the stage when the run starts.
  DevicePreference device{"host"};
  int concurrency = 1;    // copies at once; stateless stages only
  bool ordered = true;    // off: what follows takes this stage's outputs as they come
  BatchOptions batch{};   // size > 0: a batched stage (above)
  std::string process{};  // the process that runs it (PartitionOptions); empty: unpartitioned
  TagRule tags = TagRule::Carry;
  // TagRule::Set: the tags of the outputs, from the input's and the outputs
  // (waited for when read). Called on the stage's thread, once per message
  // (per message of a batch); what it throws fails that message.
  std::function<Tags(const Tags& input, const Tensors& outputs)> set_tags{};
};

// Where a source, a sink or a node of another kind runs.
struct NodeOptions {
  std::string process{};  // the process that runs it (PartitionOptions); empty: unpartitioned
};

// A node of one pipeline, as add, source, stage and sink return it.
struct NodeId {
  int index = -1;
  uint64_t pipeline = 0;  // which pipeline made it: another's is refused
};

class RunLog;        // pipeline/run_log.h
class PipelineNode;  // pipeline/node.h: the interface of every kind of node
class RunContext;

struct PipelineResult {
  std::map<std::string, Tensors> accumulators;  // by stage name, stages with one
  std::vector<NodeMetrics> metrics;             // one per node, in creation order
  CheckpointMetrics checkpoints;
  bool cancelled = false;
  const NodeMetrics& metrics_of(const std::string& name) const;
};

class Pipeline {
 public:
  explicit Pipeline(PipelineOptions options = {});
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // A node of any kind (pipeline/node.h), built by the caller.
  NodeId add(std::unique_ptr<PipelineNode> node, NodeOptions options = {});

  NodeId source(std::string name, std::shared_ptr<Source> source, NodeOptions options = {});

  // fn(message tensors..., acc...) -> {outputs..., new acc...}, as for streams.
  template <typename F>
  NodeId stage(std::string name, F&& fn, StageOptions options = {}) {
    if constexpr (std::is_convertible_v<F, const Function&>) {
      Function f = fn;
      return add_stage(std::move(name), [f](const std::vector<Spec>&) { return f; }, std::move(options));
    } else {
      return add_stage(
          std::move(name), [fn](const std::vector<Spec>& params) { return trace(params, fn); },
          std::move(options));
    }
  }

  NodeId sink(std::string name, std::shared_ptr<Sink> sink, NodeOptions options = {});
  // A callback taking const Tensors& (the whole message), const Tensor& (its
  // first tensor), or const Tensors& and const Tags& (the message and its tags).
  template <typename F>
  NodeId sink(std::string name, F&& fn, NodeOptions options = {}) {
    if constexpr (std::is_convertible_v<F, std::shared_ptr<Sink>>) {
      return sink(std::move(name), std::shared_ptr<Sink>(std::forward<F>(fn)), std::move(options));
    } else if constexpr (std::is_invocable_v<F&, const Tensors&, const Tags&>) {
      return sink(std::move(name),
                  sinks::callback(std::function<void(const Tensors&, const Tags&)>(std::forward<F>(fn))),
                  std::move(options));
    } else if constexpr (std::is_invocable_v<F&, const Tensors&>) {
      return sink(std::move(name), sinks::callback(std::function<void(const Tensors&)>(std::forward<F>(fn))),
                  std::move(options));
    } else {
      return sink(
          std::move(name),
          sinks::callback(std::function<void(const Tensors&)>([fn](const Tensors& t) { fn(t.at(0)); })),
          std::move(options));
    }
  }

  // Aligns 2 to 4 streams by the times of their rows; windows of one
  // stream, by count or by time (pipeline/event_time.h).
  NodeId zip_by_time(std::string name, ZipOptions options = {}, NodeOptions node = {});
  NodeId event_window(std::string name, EventWindowOptions options, NodeOptions node = {});

  // An edge from `from` to `to`. PipelineError when the producer's specs do
  // not match what the consumer expects at that input (naming both nodes and
  // both specs), when `to` is a source or `from` a sink, or for a 5th input.
  void connect(NodeId from, NodeId to);

  // start() then wait().
  PipelineResult run();
  // Checks the graph (cycles, stages without inputs are PipelineErrors),
  // compiles the stages and starts the sources in the background.
  void start();
  // Blocks until every source has ended and every message drained (or the
  // run was cancelled), then returns each stage's final accumulator and the
  // metrics. With ErrorPolicy::Stop, the first error is thrown as
  // PipelineError naming the stage and the message's sequence number.
  PipelineResult wait();
  // Stops the sources and the graph; wait() then returns what each stage did.
  void cancel();

  // Before start: loads the newest complete checkpoint of `dir` (empty: the
  // options' checkpoint_dir), passing over torn or corrupt ones and saying
  // so, and makes the run resume from it: stages' accumulators, sources'
  // positions, sinks' states. CheckpointError when its stages or specs are
  // not this pipeline's, or a source cannot replay (unless named in
  // at_most_once). No checkpoint there: a fresh run, checkpoint 0.
  RestoreReport restore(const std::string& dir = {});

  // While it runs (or before): replaces a stage's function or accumulator
  // at the next barrier, so that each message is processed by the old
  // version before it and the new one from it on. Checked before anything
  // changes: PipelineError when the function does not take the stage's
  // inputs and accumulator or does not produce what its consumers take, or
  // the accumulator's specs differ, or the pipeline places no barriers.
  void update(const std::string& stage, StageUpdate change);

  // A snapshot of every node's counters, from any thread. Each call also
  // samples messages and bytes out (at most every 100 ms) for the windowed
  // rates: they span from the newest sample at least 10 s old (else the
  // oldest, the run's start the first) to now.
  std::vector<NodeMetrics> metrics() const;
  CheckpointMetrics checkpoint_metrics() const;
  std::string metrics_json() const;
  // metrics() in Prometheus' text format (metrics.h), with the checkpoint
  // families when checkpoints are stored.
  std::string metrics_prometheus() const;
  // The port the metrics are served on (PipelineOptions::metrics_port), once
  // started; 0 when they are not served.
  int metrics_port() const;

  // The graph as a picture: each node's kind and name, each edge labelled
  // with the specs it carries, the nodes of each process of a partitioned
  // pipeline boxed together. DOT for Graphviz (`dot -Tsvg`), Mermaid's
  // flowchart for Markdown viewers. Before the run it resolves the specs
  // as start() does, tracing the stages (PipelineError as start() would
  // throw it); after, it draws what runs in this process.
  std::string to_dot();
  std::string to_mermaid();
  // The run log (PipelineOptions::run_log), for records of the
  // application's own (a sink's scores, say); null when there is none.
  std::shared_ptr<RunLog> run_log() const;

 private:
  struct Impl;
  friend class RunContext;  // what nodes see of a run (pipeline_graph.cpp)
  NodeId add_stage(std::string name, std::function<Function(const std::vector<Spec>&)> tracer,
                   StageOptions options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
