// A source the pipeline pulls from: a oneTBB input_node calling next_chunk()
// while the source's credit (a limiter of `capacity` messages) allows.

#include <sluice/pipeline/detail/source_node.h>

namespace sluice {
namespace {

namespace flow = tbb::flow;

class PullSourceNode : public SourceNode {
 public:
  using SourceNode::SourceNode;

  NodePorts join(NodeContext& ctx) override {
    source_->output_memory(ctx.output_memory());
    std::shared_ptr<Credit> credit = ctx.credit();
    auto* limiter = ctx.own(std::make_shared<flow::limiter_node<Envelope>>(ctx.graph(), ctx.capacity()));
    credit->release = [limiter] { limiter->decrementer().try_put(flow::continue_msg()); };
    auto* input = ctx.own(std::make_shared<flow::input_node<Envelope>>(
        ctx.graph(), [this, &ctx, credit](tbb::flow_control& fc) -> Envelope {
          if (ctx.stopping()) {
            fc.stop();
            return {};
          }
          // Numbered (and any barrier placed) before next(): a source's
          // checkpoint state is where it stands.
          NodeContext::Numbered at = ctx.number();
          std::optional<Chunk> next;
          try {
            next = source_->next_chunk();
            if (next) check_tag_rows(*next, "source '" + name() + "'");
          } catch (const std::exception& e) {
            ctx.fail(at.seq, e.what(), std::current_exception());
            fc.stop();
            return {};
          }
          if (!next) {
            ctx.ended(at.seq);
            fc.stop();
            return {};
          }
          Envelope m{at.seq, std::move(next->tensors), false, hold_credit(credit), Clock::now(), at.barrier};
          attach_tags(m, std::move(next->tags));
          Visit v(counters(), m);
          v.leave(m);
          return m;
        }));
    flow::make_edge(*input, *limiter);
    ctx.at_start([input] { input->activate(); });
    return {nullptr, limiter};
  }
};

}  // namespace

std::unique_ptr<PipelineNode> Source::make_node(std::string name, std::shared_ptr<Source> self) {
  return std::make_unique<PullSourceNode>(std::move(name), std::move(self));
}

}  // namespace sluice
