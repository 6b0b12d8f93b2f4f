// A sink: consumes each message in sequence order (serial), prepares its
// output at each checkpoint barrier (handing its part in when the sink says
// it is done, which may be after later messages: a ZeroMQ sink's receiver
// acknowledging) and commits it once the checkpoint is stored (a two-phase
// commit).

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
          return flow::continue_msg();
        }));
    return {body, nullptr};
  }
  void end_stream() override { sink_->end_stream(); }
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
  std::shared_ptr<Sink> sink_;
};

}  // namespace

std::unique_ptr<PipelineNode> sink_node(std::string name, std::shared_ptr<Sink> sink) {
  return std::make_unique<SinkNode>(std::move(name), std::move(sink));
}

}  // namespace sluice
