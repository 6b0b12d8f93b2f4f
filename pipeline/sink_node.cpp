// A sink: consumes each message in sequence order (serial), prepares its
// output at each checkpoint barrier (handing its part in when the sink says
// it is done, which may be after later messages: a ZeroMQ sink's receiver
// acknowledging) and commits it once the checkpoint is stored (a two-phase
// commit).

#include <exception>
#include <mutex>
#include <optional>

#include <sluice/pipeline/checkpoint_store.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

namespace flow = tbb::flow;

class SinkNode : public PipelineNode {
 public:
  SinkNode(std::string name, std::shared_ptr<Sink> sink)
      : PipelineNode(std::move(name)), sink_(std::move(sink)) {}

  const char* kind() const override { return "sink"; }
  bool has_output() const override { return false; }
  std::optional<std::vector<Spec>> output_spec() const override { return std::nullopt; }
  bool needs_order() const override { return true; }
  OutputMemory input_memory() const override { return sink_->input_memory(); }

  NodePorts join(NodeContext& ctx) override {
    ctx_ = &ctx;
    auto* body = ctx.own(std::make_shared<flow::function_node<Envelope, flow::continue_msg>>(
        ctx.graph(), flow::serial, [this, &ctx](const Envelope& m) {
          Visit v(counters(), m);
          if (m.barrier) {
            sink_->prepare_then(m.barrier, [&ctx, number = m.barrier, seq = m.seq](std::string state,
                                                                                   std::exception_ptr error) {
              if (!error) {
                ctx.reached(number, {}, std::move(state));
                return;
              }
              // Not handed in: this checkpoint never completes.
              try {
                std::rethrow_exception(error);
              } catch (const std::exception& e) { ctx.fail(seq, std::string("prepare: ") + e.what(), error); }
            });
          }
          if (!m.skipped) {
            try {
              sink_->consume_tagged(m.seq + ctx.seq_offset(), m.tensors, tags_of(m));
            } catch (const std::exception& e) { ctx.fail(m.seq, e.what(), std::current_exception()); }
          }
          v.leave(m);
          counted();
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
    {
      std::lock_guard lock(end_mutex_);
      end_ = messages;
    }
    counted(/*one_more=*/false);
  }
  void end_stream() override {
    {
      std::lock_guard lock(end_mutex_);
      if (ended_) {
        if (early_failure_) std::rethrow_exception(early_failure_);
        return;
      }
      ended_ = true;
    }
    sink_->end_stream();
  }
  void finish() override { sink_->finish(); }

  bool takes_part() const override { return true; }
  void checkpointing(bool stored) override { sink_->checkpointing(stored); }
  std::string checkpoint_state(int64_t number) override { return sink_->prepare(number); }
  void commit(int64_t number) override { sink_->commit(number); }
  void restore(const Checkpoint& c) override {
    auto state = c.states.find(name());
    sink_->resume(c.number, state == c.states.end() ? std::string() : state->second);
  }
  void add_metrics(NodeMetrics& m) const override { m.figures.merge(sink_->figures()); }

 private:
  // One more message consumed (or, with one_more off, its source's end
  // known): the stream ends here when that was the last.
  void counted(bool one_more = true) {
    {
      std::lock_guard lock(end_mutex_);
      consumed_ += one_more;
      if (ended_ || !end_ || consumed_ < *end_ || ctx_->storing()) return;
      ended_ = true;
    }
    try {
      sink_->end_stream();
    } catch (...) {
      std::lock_guard lock(end_mutex_);
      early_failure_ = std::current_exception();  // end_stream() throws it, as collect() calls it
    }
  }

  std::shared_ptr<Sink> sink_;
  NodeContext* ctx_ = nullptr;
  std::mutex end_mutex_;  // guards what follows
  uint64_t consumed_ = 0;
  std::optional<uint64_t> end_;  // its source's messages, once it ended
  bool ended_ = false;           // its end of stream went out
  std::exception_ptr early_failure_;
};

}  // namespace

std::unique_ptr<PipelineNode> sink_node(std::string name, std::shared_ptr<Sink> sink) {
  return std::make_unique<SinkNode>(std::move(name), std::move(sink));
}

}  // namespace sluice
