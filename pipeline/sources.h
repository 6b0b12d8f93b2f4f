#pragma once
// Where a pipeline's messages come from. A Source produces the tensors of
// one message at a time until it ends; the pipeline numbers them 0, 1, 2...

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <sluice/devices/tags.h>
#include <sluice/stream/step.h>
#include <sluice/stream/to_batched.h>

namespace sluice {

class PipelineNode;

// What a source implements. next() is called from one thread at a time.
class Source {
 public:
  virtual ~Source() = default;
  // The specs of every message's tensors (checked against the consumers at connect).
  virtual std::vector<Spec> spec() const = 0;
  // The next message, or nullopt once the source has ended. A source
  // implements this, or next_chunk() for messages with tags.
  virtual std::optional<Tensors> next();
  // The next message with its tags (devices/tags.h: a time, a sample rate,
  // events at rows...), which go on with it through the pipeline. By
  // default next()'s tensors, untagged. PipelineError from the pipeline for
  // a tag at a row the message's first tensor does not have.
  virtual std::optional<Chunk> next_chunk();

  // ---- checkpoints (README, "Checkpoints"); a source that cannot replay keeps the defaults.
  // Whether it can start again from a position it reached before: a
  // pipeline restored from a checkpoint resumes it there.
  virtual bool replayable() const { return false; }
  // Called once before the first next() of a restored run: the next message
  // is to be the one at `position` (0-based: that many came before it).
  // `state` is what checkpoint_state() said there. PipelineError when it
  // cannot go there.
  virtual void resume(uint64_t position, const std::string& state);
  // Called between two next() calls (a push source: as a message is pushed,
  // before it), where barrier `number` is placed: what resume() needs
  // besides the position (usually nothing).
  virtual std::string checkpoint_state(int64_t /*number*/) { return {}; }
  // Before the run: whether the pipeline stores checkpoints, and so will
  // call forget_before(). A source that keeps what it might replay keeps it
  // until then; otherwise it lets each message go once the pipeline is done with it.
  virtual void checkpointing(bool /*stored*/) {}
  // No restore goes back before checkpoint `number`, the oldest one the
  // store keeps (a restore passes over damaged newer ones to it) or the
  // run's final one: what came before its barrier need never be replayed
  // (a ZeroMQ source lets its sender forget it). Increasing numbers, a
  // number repeated or from an earlier run possibly. Any thread.
  virtual void forget_before(int64_t /*number*/) {}

  // Before the run: where the tensors of its messages are best made.
  // OutputMemory::Shared when they cross to another process of this host:
  // a source that allocates its tensors makes them in shared memory then
  // (shared_allocate, devices/shared_memory.h), and the channel sends them
  // with no copy. Default: ignored (the channel copies them there).
  virtual void output_memory(OutputMemory /*memory*/) {}

  // Figures of its own next to its node's metrics, by name (a ZeroMQ
  // source's channel counters). Any thread, while the pipeline runs.
  virtual std::map<std::string, double> figures() const { return {}; }

  // The pipeline node that drives it (Pipeline::source calls this with
  // `self`, a pointer owning this source): by default one that calls next_chunk()
  // while the source's credit allows; a PushSource's takes pushes instead.
  virtual std::unique_ptr<PipelineNode> make_node(std::string name, std::shared_ptr<Source> self);
};

// Called once the pipeline is done with a pushed message: `finished` is
// true when every sink consumed it (or it was skipped under
// ErrorPolicy::Skip), false when the run stopped before it got there. Runs
// on whichever thread let the message go: keep it short.
using OnDone = std::function<void(bool finished)>;

// A source other threads feed: push blocks while the pipeline holds its
// capacity of this source's messages; close ends the source.
// Thread safety: push and close may be called from any thread.
class PushSource : public Source {
 public:
  explicit PushSource(std::vector<Spec> spec) : spec_(std::move(spec)) {}
  std::vector<Spec> spec() const override { return spec_; }
  std::optional<Tensors> next() override;  // not used: the pipeline takes pushes directly

  void push(const Tensors& tensors, OnDone done = {});
  // A message with tags (PipelineError for a tag at a row its first tensor lacks).
  void push(const Chunk& chunk, OnDone done = {});
  // Barrier `number` of the pipeline upstream (another process's) comes
  // before the next message pushed: the pipeline takes its checkpoints
  // there when it has no interval of its own. `state` is what resume()
  // needs to start after it.
  void push_barrier(int64_t number, std::string state);
  // Asks the pipeline to replace stage `stage`'s accumulator with `acc` at
  // its next barrier (Pipeline::update), for an update that came with the
  // pushed messages (a ZeroMQ source's, from `sluice update`).
  // PipelineError, with nothing changed, when the pipeline refuses it or
  // has not started.
  void request_update(const std::string& stage, Tensors acc);
  void push(const Tensor& t) { push(Tensors{t}); }
  // The same, waiting at most `timeout` for the pipeline's room: false
  // (nothing pushed, `done` not called) when there was none.
  bool push_for(const Tensors& tensors, std::chrono::milliseconds timeout, OnDone done = {});
  bool push_for(const Chunk& chunk, std::chrono::milliseconds timeout, OnDone done = {});
  void close();
  // The source cannot go on: what it was to deliver was lost (`what` says
  // which). The run stops, whatever its error policy, and wait() throws a
  // PipelineError naming this source and `what`; the source is closed.
  void fail(const std::string& what);

  // Wired by the pipeline when it starts: where pushes go, and how credit is taken.
  struct ForwardedBarrier {
    int64_t number;
    std::string state;
  };
  struct Wiring {
    // Runs with one credit taken.
    std::function<void(Chunk, OnDone, std::optional<ForwardedBarrier>)> deliver;
    // Waits up to the time given (negative: forever) for a credit; nullopt
    // when the pipeline stopped, false when the time ran out.
    std::function<std::optional<bool>(std::chrono::milliseconds)> take_credit;
    std::function<void()> closed;
    std::function<void(const std::string& stage, Tensors acc)> update;
    std::function<void(const std::string& what)> abort;
  };
  void wire(Wiring w);
  void unwire();
  std::unique_ptr<PipelineNode> make_node(std::string name, std::shared_ptr<Source> self) override;

 private:
  std::vector<Spec> spec_;
  std::mutex mutex_;
  std::condition_variable wired_;
  std::optional<Wiring> wiring_;
  bool closed_ = false;
  bool stopped_ = false;
  std::optional<ForwardedBarrier> barrier_;  // for the next message pushed
};

namespace sources {

// Calls `make()` for each message until it returns nullopt. It replays by
// calling make() `position` times and dropping what it returns, so a
// generator made afresh must produce the same messages again (one reading
// live data cannot: give it a Source of its own that says so).
std::shared_ptr<Source> generator(std::vector<Spec> spec, std::function<std::optional<Tensors>()> make);
// The same for messages with tags.
std::shared_ptr<Source> generator(std::vector<Spec> spec, std::function<std::optional<Chunk>()> make);
// Calls `make(i)` for message i = 0, 1, 2... until it returns nullopt. It
// replays: a restored pipeline resumes it at the position of its checkpoint,
// so make(i) must give the same message for the same i.
std::shared_ptr<Source> indexed(std::vector<Spec> spec, std::function<std::optional<Tensors>(uint64_t)> make);
// The same for messages with tags.
std::shared_ptr<Source> indexed(std::vector<Spec> spec, std::function<std::optional<Chunk>(uint64_t)> make);
// The tensors of a list, one message each; it replays.
std::shared_ptr<Source> list(std::vector<Tensor> tensors);
// Any range of tensors (to_batched's Batches, a vector, ...): one message
// per element, with its tags where the range has them (Batches of a tagged
// tensor). It replays, stepping its iterator to the position (in one step
// where the iterator has random access).
template <typename Range>
std::shared_ptr<Source> range(Range r) {
  auto state = std::make_shared<Range>(std::move(r));
  auto it = std::make_shared<decltype(std::begin(*state))>(std::begin(*state));
  auto at = std::make_shared<uint64_t>(0);  // the position of *it
  if (*it == std::end(*state))
    throw PipelineError(error_message("sources::range", "", "at least one tensor", "none"));
  Tensor first = **it;
  return indexed({first.spec()}, [state, it, at](uint64_t i) -> std::optional<Chunk> {
    if (i < *at) {  // only a resume goes back
      *it = std::begin(*state);
      *at = 0;
    }
    for (; *at < i && *it != std::end(*state); ++*at) ++*it;
    if (*it == std::end(*state)) return std::nullopt;
    Chunk chunk{{**it}, {}};
    if constexpr (requires { state->tags(int64_t{0}); }) chunk.tags = state->tags(static_cast<int64_t>(i));
    ++*it;
    ++*at;
    return chunk;
  });
}
// A push source for messages of `spec`.
std::shared_ptr<PushSource> push(std::vector<Spec> spec);

}  // namespace sources
}  // namespace sluice
