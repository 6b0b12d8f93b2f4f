// A sink: consumes each message in sequence order (serial), prepares its
// output at each checkpoint barrier (handing its part in when the sink says
// it is done, which may be after later messages: a ZeroMQ sink's receiver
// acknowledging) and commits it once the checkpoint is stored (a two-phase
// commit). Its stream ends as soon as its source's last message is consumed.
// A sink that may wait for its reader waits on a thread of its own, never
// on the pipeline's (SinkOutbox).

#include <atomic>
#include <exception>
#include <limits>
#include <mutex>

#include <sluice/pipeline/checkpoint_store.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/detail/sink_outbox.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

namespace flow = tbb::flow;

class SinkNode : public PipelineNode {
 public:
  SinkNode(std::string name, std::shared_ptr<Sink> sink)
      : PipelineNode(std::move(name)), sink_(std::move(sink)) {}
  // A run that ended without stop() left nothing in the outbox; one that
  // did not end (the pipeline destroyed as it ran) must not wait there.
  ~SinkNode() override {
    if (outbox_ && !outbox_->empty()) stop();
  }

  const char* kind() const override { return "sink"; }
  bool has_output() const override { return false; }
  std::optional<std::vector<Spec>> output_spec() const override { return std::nullopt; }
  bool needs_order() const override { return true; }
  OutputMemory input_memory() const override { return sink_->input_memory(); }

  NodePorts join(NodeContext& ctx) override {
    ctx_ = &ctx;
    if (sink_->waits_for_reader()) outbox_ = std::make_unique<SinkOutbox>(ctx.graph());
    auto* body = ctx.own(std::make_shared<flow::function_node<Envelope, flow::continue_msg>>(
        ctx.graph(), flow::serial, [this](const Envelope& m) {
          if (!outbox_) {
            take(m);
          } else if (!outbox_->empty() || m.barrier || !try_take(m)) {
            // It would wait (or a barrier, which may): it waits in the
            // outbox instead, and so do the messages after it.
            outbox_->push([this, m] { take(m); });
          }
          return flow::continue_msg();
        }));
    return {body, nullptr};
  }

  // Its stream's end goes out as soon as its source's last message has been
  // consumed, not when the whole run ends: a reader in another process may
  // hold another stream's messages until this one ends (a join by time),
  // while the run here waits on that other stream. Not where checkpoints
  // are stored: the final one still passes the sinks.
  bool watches_input_ends() const override { return true; }
  void input_ended(size_t, uint64_t messages) override {
    end_.store(messages);
    end_if_done();
  }
  void end_stream() override {
    if (outbox_) outbox_->wait_empty();  // an end under way there, or the messages before it
    if (ended_.exchange(true)) {
      std::lock_guard lock(failure_mutex_);
      if (early_failure_) std::rethrow_exception(early_failure_);
      return;
    }
    sink_->end_stream();
  }
  void finish() override {
    if (outbox_) outbox_->wait_empty();
    sink_->finish();
  }
  // What waits in the outbox is dropped, and a wait under way there ends.
  void stop() override {
    if (!outbox_) return;
    outbox_->drop();
    sink_->stop();
  }

  bool takes_part() const override { return true; }
  void checkpointing(bool stored) override { sink_->checkpointing(stored); }
  std::string checkpoint_state(int64_t number) override {
    if (outbox_) outbox_->wait_empty();  // the final checkpoint's, after the graph drained
    return sink_->prepare(number);
  }
  void commit(int64_t number) override { sink_->commit(number); }
  void restore(const Checkpoint& c) override {
    auto state = c.states.find(name());
    sink_->resume(c.number, state == c.states.end() ? std::string() : state->second);
  }
  void add_metrics(NodeMetrics& m) const override { m.figures.merge(sink_->figures()); }

 private:
  // Hands message `m` to the sink, which may wait: on the outbox's thread
  // for a sink that waits for its reader.
  void take(const Envelope& m) {
    Visit v(counters(), m);
    if (m.barrier) {
      sink_->prepare_then(m.barrier, [ctx = ctx_, number = m.barrier, seq = m.seq](std::string state,
                                                                                   std::exception_ptr error) {
        if (!error) {
          ctx->reached(number, {}, std::move(state));
          return;
        }
        // Not handed in: this checkpoint never completes.
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) { ctx->fail(seq, std::string("prepare: ") + e.what(), error); }
      });
    }
    if (!m.skipped) {
      try {
        sink_->consume_tagged(m.seq + ctx_->seq_offset(), m.tensors, tags_of(m));
      } catch (const std::exception& e) { ctx_->fail(m.seq, e.what(), std::current_exception()); }
    }
    taken(v, m);
  }

  // The same without waiting: false, having done nothing, when the sink
  // would wait.
  bool try_take(const Envelope& m) {
    const Clock::time_point start = Clock::now();
    if (!m.skipped) {
      try {
        if (!sink_->try_consume(m.seq + ctx_->seq_offset(), m.tensors, tags_of(m))) return false;
      } catch (const std::exception& e) { ctx_->fail(m.seq, e.what(), std::current_exception()); }
    }
    Visit v(counters(), m);
    v.start = start;
    taken(v, m);
    return true;
  }

  void taken(Visit& v, const Envelope& m) {
    v.leave(m);
    consumed_.fetch_add(1);
    if (end_.load() != kUnknown) end_if_done();
  }

  // Ends the stream here once its source's last message is consumed. The
  // body counts a message, then reads the end; input_ended sets the end,
  // then reads the count (both sequentially consistent): whichever comes
  // second sees both, and the exchange lets only one of them end it. A sink
  // that waits for its reader ends on the outbox's thread, which may wait.
  void end_if_done() {
    const uint64_t end = end_.load();
    if (end == kUnknown || consumed_.load() < end || ctx_->storing() || ended_.exchange(true)) return;
    if (outbox_)
      outbox_->push([this] { end_now(); });
    else
      end_now();
  }
  void end_now() {
    try {
      sink_->end_stream();
    } catch (...) {
      std::lock_guard lock(failure_mutex_);
      early_failure_ = std::current_exception();  // end_stream() throws it, as collect() calls it
    }
  }

  static constexpr uint64_t kUnknown = std::numeric_limits<uint64_t>::max();
  std::shared_ptr<Sink> sink_;
  NodeContext* ctx_ = nullptr;
  std::atomic<uint64_t> consumed_{0};
  std::atomic<uint64_t> end_{kUnknown};  // its source's messages, once it ended
  std::atomic<bool> ended_{false};       // its end of stream went out (or is going)
  std::mutex failure_mutex_;
  std::exception_ptr early_failure_;  // what ending it early threw
  // A sink that waits for its reader: what it could not take at once. Last:
  // its thread, which uses the members above, ends first.
  std::unique_ptr<SinkOutbox> outbox_;
};

}  // namespace

std::unique_ptr<PipelineNode> sink_node(std::string name, std::shared_ptr<Sink> sink) {
  return std::make_unique<SinkNode>(std::move(name), std::move(sink));
}

}  // namespace sluice
