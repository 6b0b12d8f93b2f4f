// A source other threads push into (PushSource): each push waits for one
// of `capacity` credits, then goes straight into the graph through a
// broadcast node. Until the source closes, more may come from outside the
// graph, so it holds the graph's wait open.

#include <atomic>
#include <semaphore>

#include <sluice/pipeline/pipeline.h>
#include <sluice/pipeline/detail/source_node.h>

namespace sluice {
namespace {

namespace flow = tbb::flow;

class PushSourceNode : public SourceNode {
 public:
  PushSourceNode(std::string name, std::shared_ptr<PushSource> source)
      : SourceNode(std::move(name), source), push_(std::move(source)) {}

  NodePorts join(NodeContext& ctx) override {
    auto* entry = ctx.own(std::make_shared<flow::broadcast_node<Envelope>>(ctx.graph()));
    // A semaphore of `capacity` credits makes push block when the pipeline is full.
    auto slots = std::make_shared<std::counting_semaphore<>>(static_cast<std::ptrdiff_t>(ctx.capacity()));
    std::shared_ptr<Credit> credit = ctx.credit();
    credit->release = [slots] { slots->release(); };
    PushSource::Wiring w;
    w.take_credit = [slots, &ctx](std::chrono::milliseconds timeout) -> std::optional<bool> {
      const auto deadline = Clock::now() + timeout;
      for (;;) {
        auto step = std::chrono::milliseconds(50);
        if (timeout.count() >= 0)
          step =
              std::min(step, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
        if (slots->try_acquire_for(std::max(step, std::chrono::milliseconds(0)))) return true;
        if (ctx.stopping()) return std::nullopt;
        if (timeout.count() >= 0 && Clock::now() >= deadline) return false;
      }
    };
    // How many it numbered: said as it closes, for the nodes that wait on its stream.
    auto numbered = std::make_shared<std::atomic<uint64_t>>(0);
    w.deliver = [this, entry, credit, numbered, &ctx](Chunk c, OnDone done,
                                                      std::optional<PushSource::ForwardedBarrier> barrier) {
      NodeContext::Numbered at = ctx.number(std::move(barrier));
      for (uint64_t was = numbered->load();
           was < at.seq + 1 && !numbered->compare_exchange_weak(was, at.seq + 1);) {}
      Envelope m{at.seq,    std::move(c.tensors), false, hold_credit(credit, std::move(done)), Clock::now(),
                 at.barrier};
      attach_tags(m, std::move(c.tags));
      Visit v(counters(), m);
      v.leave(m);
      entry->try_put(m);
    };
    // Its end is told while the graph is still held open for it.
    w.closed = [let_go = ctx.hold_open(), numbered, &ctx] {
      ctx.ended(numbered->load());
      let_go();
    };
    w.abort = [&ctx](const std::string& what) { ctx.abort(what); };
    w.update = [&ctx](const std::string& stage, Tensors acc) { ctx.update(stage, {.acc = std::move(acc)}); };
    ctx.at_start([push = push_, w = std::move(w)]() mutable { push->wire(std::move(w)); });
    return {nullptr, entry};
  }

  void stop() override { push_->unwire(); }

 private:
  std::shared_ptr<PushSource> push_;
};

}  // namespace

std::unique_ptr<PipelineNode> PushSource::make_node(std::string name, std::shared_ptr<Source> self) {
  return std::make_unique<PushSourceNode>(std::move(name),
                                          std::shared_ptr<PushSource>(std::move(self), this));
}

}  // namespace sluice
