#pragma once
// Where a pipeline's messages end: a callback, a collector keeping them, or .npy files.

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <sluice/devices/tags.h>
#include <sluice/stream/step.h>

namespace sluice {

// What a sink implements. consume() is called one message at a time, in
// sequence order when the path to the sink is ordered; finish() once after
// the last message (or after a cancel).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void consume(uint64_t seq, const Tensors& tensors) = 0;
  // The same with the message's tags (devices/tags.h), which is what the
  // pipeline calls: a sink that reads tags overrides this one. By default
  // consume(seq, tensors).
  virtual void consume_tagged(uint64_t seq, const Tensors& tensors, const Tags& tags);
  // No more messages: tells whoever reads them without waiting for them to
  // be taken (a ZeroMQ sink sends its end of stream). Every sink of the
  // process is told before any finishes, so that one waiting for its
  // reader to take everything does not hold back another's end; and a sink
  // fed by one source, through nodes that keep its numbers, is told as
  // soon as it has consumed that source's last message (where checkpoints
  // are not stored), from any thread, while the rest of the run goes on.
  virtual void end_stream() {}
  virtual void finish() {}

  // ---- checkpoints (README, "Checkpoints"): how a sink's output is
  // committed with them, as a two-phase commit. The defaults take no part.
  // Before the run: whether the pipeline stores checkpoints (and so will
  // call commit()); barriers may come either way.
  virtual void checkpointing(bool /*stored*/) {}
  // Barrier `number` reached the sink: what it consumed so far belongs to
  // that checkpoint. Make it durable (or ready to publish) and return what
  // resume() needs to carry on after it (a sequence number, say).
  virtual std::string prepare(int64_t /*number*/) { return {}; }
  // The same, for a sink whose part is done only after the barrier has
  // passed (a ZeroMQ sink: once its receiver has acknowledged what it sent
  // before the barrier): it goes on consuming meanwhile and calls `done`
  // with what prepare would return, or with the error that failed it, once,
  // from any thread, and never after finish() has returned. The default
  // calls prepare, then done.
  using Prepared = std::function<void(std::string state, std::exception_ptr error)>;
  virtual void prepare_then(int64_t number, const Prepared& done) {
    std::string state;
    try {
      state = prepare(number);
    } catch (...) {
      done({}, std::current_exception());
      return;
    }
    done(std::move(state), nullptr);
  }
  // Checkpoint `number` is stored: what was prepared for it may be
  // published. Any thread, in increasing numbers.
  virtual void commit(int64_t /*number*/) {}
  // Before a run restored from checkpoint `number`, which prepare() gave
  // `state` (0 and empty: restore found none, the run starts afresh): what
  // was consumed after that barrier comes again.
  virtual void resume(int64_t /*number*/, const std::string& /*state*/) {}

  // Figures of its own next to its node's metrics, by name (a ZeroMQ sink's
  // channel counters). Any thread, while the pipeline runs.
  virtual std::map<std::string, double> figures() const { return {}; }

  // Where the tensors it consumes are best computed: Shared for a sink that
  // passes them to another process of this host by reference (a ZeroMQ
  // sink on an ipc endpoint), so that the stages before it write them
  // there once rather than the sink copying them.
  virtual OutputMemory input_memory() const { return OutputMemory::Default; }

  // ---- waiting for a reader (a ZeroMQ sink whose reader has no room). The
  // pipeline's threads never wait in a sink: a pipeline whose every thread
  // waited so would run nothing else, and a reader in another process may
  // be waiting for what it would run. A sink that may wait says so
  // (waits_for_reader); the pipeline then hands it each message with
  // try_consume, which consumes it as consume_tagged would or, when that
  // would wait, does nothing and returns false. That message and the ones
  // after it, barriers (prepare_then) and the end of stream (end_stream)
  // then go to a thread of the sink's own, which calls the waiting
  // functions in order; the messages waiting there keep their source's
  // credit, so backpressure still reaches the sources. stop(): the run is
  // stopping early; a wait under way ends (what it was sending is dropped).
  virtual bool waits_for_reader() const { return false; }
  virtual bool try_consume(uint64_t seq, const Tensors& tensors, const Tags& tags) {
    consume_tagged(seq, tensors, tags);
    return true;
  }
  virtual void stop() {}
};

// Keeps every message's tensors, in arrival order. Thread safety: results()
// may be read while the pipeline runs.
class Collector : public Sink {
 public:
  void consume(uint64_t seq, const Tensors& tensors) override;
  void consume_tagged(uint64_t seq, const Tensors& tensors, const Tags& tags) override;
  std::vector<Tensors> results() const;
  std::vector<uint64_t> sequence_numbers() const;
  std::vector<Tags> tags() const;  // each message's, in the same order

 private:
  mutable std::mutex mutex_;
  std::vector<Tensors> results_;
  std::vector<uint64_t> seqs_;
  std::vector<Tags> tags_;
};

namespace sinks {
std::shared_ptr<Sink> callback(std::function<void(const Tensors&)> fn);
std::shared_ptr<Sink> callback(std::function<void(const Tensors&, const Tags&)> fn);
std::shared_ptr<Collector> collector();
// Writes each message's tensors to `directory` as .npy files, one per
// tensor, named by sequence number and place (000000000042-0.npy), each
// written under a hidden name and renamed into place. While the pipeline
// stores checkpoints, a message's files are renamed in only once a
// checkpoint after it is stored (before that they wait in .pending/), so
// after any crashes and restores the directory holds each message once.
std::shared_ptr<Sink> npy_files(const std::string& directory);
}  // namespace sinks

}  // namespace sluice
