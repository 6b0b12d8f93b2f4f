#pragma once
// A pipeline node: the one interface every kind of node implements. Start
// here to add a kind (a router, a filter, a batcher, a channel edge): one
// class deriving from PipelineNode, in one file, added with Pipeline::add.
//
//   class Tap : public sluice::PipelineNode {              // passes messages on, counting them
//    public:
//     using PipelineNode::PipelineNode;
//     const char* kind() const override { return "tap"; }
//     std::optional<std::vector<sluice::Spec>> output_spec() const override { return in_; }
//     void resolve(const std::vector<sluice::Spec>& inputs) override { in_ = inputs; }
//     sluice::NodePorts join(sluice::NodeContext& ctx) override {
//       auto* body = ctx.own(std::make_shared<tbb::flow::function_node<sluice::Envelope, sluice::Envelope>>(
//           ctx.graph(), tbb::flow::unlimited, [this](sluice::Envelope m) {
//             sluice::Visit v(counters(), m);
//             v.leave(m);
//             return m;
//           }));
//       return {body, body};
//     }
//    private:
//     std::optional<std::vector<sluice::Spec>> in_;
//   };
//   auto tap = p.add(std::make_unique<Tap>("tap"));
//
// The pipeline owns the nodes and the edges between them: it checks specs
// at connect and when the run starts (resolve, in topological order), joins
// several inputs into one message by sequence number, restores sequence
// order before a node that needs_order(), numbers messages, places
// checkpoint barriers and counts what each node does. A node says what it
// takes and gives, and makes its part of the oneTBB graph in join().

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tbb/flow_graph.h>

#include <sluice/pipeline/metrics.h>
#include <sluice/pipeline/sources.h>
#include <sluice/stream/step.h>

namespace sluice {

using Clock = std::chrono::steady_clock;

// What travels on an edge: a message's tensors and what the pipeline keeps
// with them (its number, its source's credit, a barrier). Not a
// wire::Message, which is what a channel carries between processes.
struct Envelope {
  uint64_t seq = 0;  // its number in this run, from 0 per connected part of the pipeline
  Tensors tensors;
  bool skipped = false;  // dropped (ErrorPolicy::Skip, a filter): passes on so that sequencers move on
  std::shared_ptr<void> credit;  // returns the source's credit when the last copy is gone
  Clock::time_point born;        // when its source made it
  int64_t barrier = 0;           // checkpoint barrier before this message, 0: none (checkpoints.h)
  // Its tags (devices/tags.h); null: none. They live in what `credit`
  // holds (attach_tags), so that a copy of a message, made at every hop,
  // copies a pointer and touches no count.
  const Tags* tags = nullptr;
  // When the node before let it go (Visit::leave): a traced run shows its
  // wait in the next node's queue from then to that node's start.
  Clock::time_point sent;
};

// Counts a message into a node and, with leave(), out of it and its time
// there. A node that gives several messages for one (or one for several)
// leaves with each: each is timed from the one before.
struct Visit {
  NodeCounters& counters;
  Clock::time_point start = Clock::now();
  Clock::time_point queued;  // traced: when the message came into the node's queue (its `sent`)
  Visit(NodeCounters& c, const Envelope& m);
  explicit Visit(NodeCounters& c) : counters(c) {}  // no message in: what a node flushes at the end
  // `m` goes on to the next nodes: stamped `sent`, as it leaves.
  void leave(Envelope& m);
  // `m` goes no further (a sink's), or was left already.
  void leave(const Envelope& m);
};

// A source's credit: how many of its messages may be in flight. The node
// that makes messages sets `release`; the last copy of each message calls
// it, possibly after the graph is torn down, so releasing is switched off
// before that.
struct Credit {
  // Off once the run is over (Pipeline::Impl::end_credits): a credit given
  // back later, by a thread of a sink that still holds messages, must not
  // reach the graph, whose nodes are going.
  std::atomic<bool> live{true};
  std::atomic<int> releasing{0};  // releases under way, which end_credits waits out
  // Cleared when the run stops early: a message let go after that was
  // dropped, not finished with.
  std::atomic<bool> finishing{true};
  std::function<void()> release;
};
// What a message made by a source holds: its credit, given back (and `done`
// told whether the message was finished with) as the last copy goes.
std::shared_ptr<void> hold_credit(const std::shared_ptr<Credit>& credit,
                                  std::function<void(bool finished)> done = {});

enum class TagRule : uint8_t;  // pipeline.h

// Gives message `m` its tags (none when empty): held with its credit,
// which every copy of it keeps.
void attach_tags(Envelope& m, Tags tags);
// The tags of an envelope (none: an empty set).
const Tags& tags_of(const Envelope& m);
// The tags of `out`, a stage's outputs made from message `in` (whose
// credit `out` holds), by `rule` (StageOptions::tags); `set` is
// StageOptions::set_tags.
void stage_tags(TagRule rule, const std::function<Tags(const Tags&, const Tensors&)>& set, const Envelope& in,
                Envelope& out);
// PipelineError naming `who` (a source) for a tag at a row the chunk's
// first tensor does not have: it would be at no sample.
void check_tag_rows(const Chunk& chunk, const std::string& who);

struct Checkpoint;  // checkpoint_store.h
struct StageUpdate;
class PipelineNode;

// Where a node's part of the graph is joined: the receiver its (joined,
// ordered) input goes to, and the sender its consumers connect to. A source
// has no input, a sink no output.
struct NodePorts {
  tbb::flow::receiver<Envelope>* input = nullptr;
  tbb::flow::sender<Envelope>* output = nullptr;
  // A node that takes its inputs apart (separate_inputs()): one receiver
  // per input, in connect order, instead of `input`.
  std::vector<tbb::flow::receiver<Envelope>*> inputs{};
};

// What the pipeline offers a node while it joins the graph and while it
// runs: one per node, alive as long as the run, so bodies may keep it.
class NodeContext {
 public:
  virtual ~NodeContext() = default;
  virtual tbb::flow::graph& graph() = 0;
  // Keeps a oneTBB node (or anything) alive as long as the graph.
  template <typename T>
  T* own(std::shared_ptr<T> thing) {
    keep(thing);
    return thing.get();
  }
  // A message (of this run's number `seq`) failed here: counted, logged,
  // and under ErrorPolicy::Stop the run stops. `cause`, what was thrown,
  // is kept as the run's PipelineError's cause() when it is the first.
  virtual void fail(uint64_t seq, const std::string& what, std::exception_ptr cause = nullptr) = 0;
  // This node cannot go on (a source whose data was lost on the way): the
  // run stops whatever its error policy, and wait() throws a PipelineError
  // naming the node and `what`. Any thread.
  virtual void abort(const std::string& what) = 0;
  // The run is stopping (cancelled, failed under ErrorPolicy::Stop, or aborted).
  virtual bool stopping() const = 0;
  // Runs `fn` once every edge exists: a message put into the graph before
  // would be dropped. Sources start here.
  virtual void at_start(std::function<void()> fn) = 0;
  // Keeps the graph's wait from returning while messages may still come
  // from outside it (another thread, a timer); the function given back lets
  // go (idempotent), and the pipeline calls it when the run stops.
  virtual std::function<void()> hold_open() = 0;
  virtual size_t capacity() const = 0;  // messages of one source in flight at once
  // Where this run's numbers start (a restored run's position): a message's
  // number for the world outside the run is seq + seq_offset().
  virtual uint64_t seq_offset() const = 0;
  // Where a node that computes puts its outputs: shared memory when they
  // cross to another process of this host (a partitioned edge over ipc),
  // so that the kernels write them once and that process reads them in place.
  virtual OutputMemory output_memory() const = 0;

  // ---- for sources
  // This source's credit, flipped off by the pipeline when the run stops.
  virtual std::shared_ptr<Credit> credit() = 0;
  struct Numbered {
    uint64_t seq = 0;
    int64_t barrier = 0;  // placed before it, 0: none
  };
  // Numbers this source's next message, placing a barrier before it where
  // one is due (`forwarded`: one from upstream, with the source's state).
  virtual Numbered number(std::optional<PushSource::ForwardedBarrier> forwarded = std::nullopt) = 0;
  // This source ended without a message numbered `seq`.
  virtual void ended(uint64_t seq) = 0;
  // Asks for a live update of a stage (Pipeline::update).
  virtual void update(const std::string& stage, StageUpdate change) = 0;

  // ---- for nodes that take part in checkpoints (takes_part())
  // Whether checkpoints are stored (else barriers only apply updates).
  virtual bool storing() const = 0;
  // Barrier `number` reached this node: an accumulator as it stood (host
  // copies; empty when not storing), a state resume needs.
  virtual void reached(int64_t number, Tensors snapshot, std::string state) = 0;

 protected:
  virtual void keep(std::shared_ptr<void> thing) = 0;
};

class PipelineNode {
 public:
  explicit PipelineNode(std::string name) : name_(std::move(name)) {}
  virtual ~PipelineNode() = default;
  PipelineNode(const PipelineNode&) = delete;
  PipelineNode& operator=(const PipelineNode&) = delete;

  const std::string& name() const { return name_; }
  // "source", "stage", "sink", ...: in messages and metrics.
  virtual const char* kind() const = 0;
  // How many inputs it takes: 0 for a source; the pipeline joins up to 4.
  virtual size_t max_inputs() const { return 4; }
  virtual bool has_output() const { return true; }

  // ---- specs
  // What it expects, when known before the run (connect checks producers
  // against it); nullopt: whatever its producers give, seen in resolve().
  virtual std::optional<std::vector<Spec>> input_spec() const { return std::nullopt; }
  // What it gives, once known (after resolve() at the latest).
  virtual std::optional<std::vector<Spec>> output_spec() const = 0;
  // When the run starts, in topological order: its producers' output specs
  // in connect order. PipelineError when it cannot take them.
  virtual void resolve(const std::vector<Spec>& /*inputs*/) {}
  // The same, each producer's specs apart; by default, all of them in one
  // list to resolve().
  virtual void resolve_inputs(const std::vector<std::vector<Spec>>& inputs);
  // It takes its inputs as separate streams (a join by time): the pipeline
  // does not join them by sequence number, join() gives one receiver per
  // input (NodePorts::inputs), and it numbers its outputs itself from 0.
  virtual bool separate_inputs() const { return false; }
  // Its outputs are numbered by itself, not as its input's were (a node
  // with separate inputs, windows).
  virtual bool numbers_its_outputs() const { return separate_inputs(); }
  // Where such a node's numbers go on from in a restored run (each run
  // numbers from 0; this is added, as a source's position is to its own).
  virtual uint64_t outputs_numbered_from() const { return 0; }
  // It would know when an input's stream ends, before the run does (a
  // node with separate inputs, a sink that can end its reader's stream early).
  virtual bool watches_input_ends() const { return separate_inputs(); }
  // For such a node: input `input` ended after `messages` messages
  // (numbered 0 to messages - 1), some of which may still be on their way
  // to it. Said once, from any thread, for each input fed by one source
  // through nodes that keep its numbers (for a node without separate
  // inputs, only where it has one input); not for others.
  virtual void input_ended(size_t /*input*/, uint64_t /*messages*/) {}

  // ---- order
  // Its messages must arrive in sequence order (a sink, an accumulator): the
  // pipeline puts a sequencer before it.
  virtual bool needs_order() const { return false; }
  // It passes messages on out of order (a stage with `ordered` off).
  virtual bool reorders() const { return false; }
  // Where the nodes before it best write their outputs (Sink::input_memory).
  virtual OutputMemory input_memory() const { return OutputMemory::Default; }

  // ---- the graph
  virtual NodePorts join(NodeContext& ctx) = 0;
  // The run is stopping: stop taking work from outside the graph.
  virtual void stop() {}
  // The graph drained and no more input will come: put into the graph what
  // it still holds (a partial window, a chunk waiting for a match), and
  // say whether it put anything. Called in topological order, the pipeline
  // draining the graph again after each node that did; not after a cancel.
  virtual bool drained(NodeContext& /*ctx*/) { return false; }
  // After the graph drained, on every node before any finishes: tell what
  // reads its output in another process that no more comes (Sink::end_stream).
  virtual void end_stream() {}
  // After the graph drained: flush and close (a sink).
  virtual void finish() {}

  // ---- checkpoints (README, "Checkpoints"); the defaults take no part
  virtual bool places_barriers() const { return false; }  // a source: numbers messages
  virtual bool takes_part() const { return false; }       // hands in at each barrier (reached)
  // Whether a source can go back to a checkpoint's position: restore
  // refuses one that cannot, unless PipelineOptions::at_most_once names it.
  virtual bool replays() const { return true; }
  // Whether the pipeline stores checkpoints, before the run.
  virtual void checkpointing(bool /*stored*/) {}
  // Its state at barrier `number` (a source where it is placed, a sink
  // preparing its output), for resume.
  virtual std::string checkpoint_state(int64_t /*number*/) { return {}; }
  // Checkpoint `number` is stored.
  virtual void commit(int64_t /*number*/) {}
  // No restore goes back before checkpoint `number` (the oldest one the
  // store keeps): a source may forget what came before its barrier.
  virtual void replay_from(int64_t /*number*/) {}
  // Restoring: checked before anything changes, CheckpointError when `c`
  // does not fit this node (`at` says where); the source's position in `c`.
  virtual void check(const Checkpoint& /*c*/, const std::string& /*at*/) const {}
  virtual std::optional<int64_t> position(const Checkpoint& /*c*/) const { return std::nullopt; }
  // Resumes from `c` (number 0: none was found, the run starts afresh).
  virtual void restore(const Checkpoint& /*c*/) {}
  // The accumulator it carries, if any: in the run's result and checkpoints.
  virtual std::optional<Tensors> accumulator() const { return std::nullopt; }
  // Whether a checkpoint's tensors under its name are its own: a stage's
  // accumulator, or what a node that holds rows held at the barrier.
  virtual bool checkpoints_tensors() const { return accumulator().has_value(); }
  // A live update (Pipeline::update), checked before it is queued for the
  // next barrier; `to_stages`: its consumers include stages, which take its
  // outputs' specs as they are.
  virtual void update(StageUpdate change, bool to_stages);
  // Barrier placed on message `seq` of its connected part: queued updates
  // take effect from there.
  virtual void barrier_placed(uint64_t /*seq*/) {}

  // ---- metrics: figures of its own kind next to the counters
  virtual void add_metrics(NodeMetrics& /*m*/) const {}

  NodeCounters& counters() { return counters_; }
  const NodeCounters& counters() const { return counters_; }

 private:
  std::string name_;
  NodeCounters counters_;
};

// A snapshot of an accumulator: host copies, since the next step donates
// (overwrites) the buffers a stage holds.
Tensors host_copies(const Tensors& acc);

}  // namespace sluice
