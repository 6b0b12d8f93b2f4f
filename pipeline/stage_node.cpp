// A compiled stage: a traced Function run by a Step on each message, with
// the accumulator carried from message to message (a serial node) or
// without one (up to `concurrency` copies at once).

#include <algorithm>
#include <atomic>
#include <mutex>

#include <sluice/base/detail/log.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/checkpoint_store.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {
namespace {

namespace flow = tbb::flow;

class StageNode : public PipelineNode {
 public:
  StageNode(std::string name, std::function<Function(const std::vector<Spec>&)> tracer, StageOptions options)
      : PipelineNode(std::move(name)),
        tracer_(std::move(tracer)),
        options_(std::move(options)),
        acc_given_(options_.acc) {
    if (options_.concurrency < 1)
      throw PipelineError(error_message(who(), "concurrency", "at least 1", options_.concurrency));
    if (options_.concurrency > 1 && !options_.acc.empty())
      throw PipelineError(error_message(who(), "concurrency",
                                        "1 (a stage with an accumulator runs one message at a time)",
                                        options_.concurrency));
    // Known inputs: trace now, so that connect can check specs; it compiles
    // when the run starts, on the device of the process that runs it.
    if (!options_.input.empty()) trace(options_.input);
  }

  const char* kind() const override { return "stage"; }
  std::optional<std::vector<Spec>> input_spec() const override {
    if (traced_) return traced_->inputs;
    return std::nullopt;
  }
  std::optional<std::vector<Spec>> output_spec() const override {
    if (traced_) return traced_->outputs;
    return std::nullopt;
  }
  void resolve(const std::vector<Spec>& inputs) override {
    if (!traced_) {
      trace(inputs);
    } else if (inputs != traced_->inputs) {
      throw PipelineError(error_message(who(), "the specs its inputs produce", specs_str(traced_->inputs),
                                        specs_str(inputs)));
    }
    step_.emplace(traced_->function, traced_->inputs, options_.acc, options_.device.resolve(), who());
    acc_ = step_->initial_acc(options_.acc);
  }
  bool needs_order() const override { return stateful(); }
  bool reorders() const override { return !options_.ordered; }

  // A stage whose device runs steps on the calling thread (the host) waits
  // for its outputs in the body, a oneTBB function_node. A device that queues
  // work (a GPU) only starts the step in the body of an async_node, which
  // passes the message on from the device's completion callback: no worker
  // waits while the GPU computes, and the next message's step is queued
  // behind this one, its accumulator still on the device.
  NodePorts join(NodeContext& ctx) override {
    size_t concurrency = stateful() ? 1 : static_cast<size_t>(options_.concurrency);
    if (step_->device().host_memory()) {
      auto* body = ctx.own(std::make_shared<flow::function_node<Envelope, Envelope>>(
          ctx.graph(), concurrency, [this, &ctx](const Envelope& in) -> Envelope {
            Visit v(counters(), in);
            Envelope out = start(in, ctx);
            // Wait here so a failure is this stage's, on this message.
            try {
              for (const Tensor& t : out.tensors) t.wait();
              for (const Tensor& t : acc_) t.wait();
            } catch (const std::exception& e) {
              fail(out, e.what(), std::current_exception(), ctx);
            }
            v.leave(out);
            return out;
          }));
      return {body, body};
    }
    using Async = flow::async_node<Envelope, Envelope>;
    auto* body = ctx.own(std::make_shared<Async>(
        ctx.graph(), concurrency, [this, &ctx](const Envelope& in, Async::gateway_type& gateway) {
          auto visit = std::make_shared<Visit>(counters(), in);
          auto out = std::make_shared<Envelope>(start(in, ctx));
          // Every event the message's outputs (and the accumulator) wait on.
          std::vector<EventPtr> pending;
          for (const Tensors* ts : {&out->tensors, &acc_})
            for (const Tensor& t : *ts)
              if (!t.is_ready() && std::find(pending.begin(), pending.end(), t.buffer()->ready) == pending.end())
                pending.push_back(t.buffer()->ready);
          if (pending.empty()) {
            visit->leave(*out);
            gateway.try_put(*out);
            return;
          }
          gateway.reserve_wait();
          auto left = std::make_shared<std::atomic<size_t>>(pending.size());
          for (const EventPtr& e : pending)
            e->then([this, &ctx, &gateway, e, out, visit, left] {
              if (std::exception_ptr error = e->error()) {
                std::lock_guard lock(failure_mutex_);
                if (!out->skipped) {
                  try {
                    std::rethrow_exception(error);
                  } catch (const std::exception& ex) {
                    fail(*out, ex.what(), error, ctx);
                  }
                }
              }
              if (left->fetch_sub(1, std::memory_order_acq_rel) != 1) return;
              visit->leave(*out);
              gateway.try_put(*out);
              gateway.release_wait();
            });
        }));
    // An async_node takes its successors on its output port only.
    return {body, &flow::output_port<0>(*body)};
  }

  bool takes_part() const override { return stateful(); }
  void check(const Checkpoint& c, const std::string& at) const override {
    if (!stateful()) return;
    auto it = c.accumulators.find(name());
    if (it == c.accumulators.end())
      throw CheckpointError(error_message(at + who(), "", "its accumulator", "none"));
    if (specs_of(acc_) != specs_of(it->second))
      throw CheckpointError(error_message(at + who(), "", "an accumulator " + specs_str(specs_of(acc_)),
                                          specs_str(specs_of(it->second))));
  }
  void restore(const Checkpoint& c) override {
    if (c.number > 0 && stateful()) acc_ = step_->initial_acc(c.accumulators.at(name()));
  }
  std::optional<Tensors> accumulator() const override {
    if (stateful()) return acc_;
    return std::nullopt;
  }

  void update(StageUpdate change, bool to_stages) override {
    const std::string where = "update of " + who();
    if (!change.function && change.acc.empty())
      throw PipelineError(error_message(where, "", "a function or an accumulator", "neither"));
    std::lock_guard lock(version_mutex_);
    const Step& current = !waiting_.empty() ? waiting_.back().step : version_ ? version_->step : *step_;
    const Tensors& acc_now = acc_given_;
    if (!change.acc.empty() && !change.function && specs_of(acc_now) != specs_of(change.acc))
      throw PipelineError(error_message(where, "", "an accumulator " + specs_str(specs_of(acc_now)),
                                        specs_str(specs_of(change.acc))));
    Version v;
    if (change.function) {
      try {
        v.step = Step(*change.function, current.input_spec(), change.acc.empty() ? acc_now : change.acc,
                      current.device(), who());
      } catch (const Error& e) {
        throw PipelineError(
            error_message(where, fmt::format("the new function does not fit: {}", e.what()), "", ""));
      }
      if (to_stages && v.step.output_spec() != current.output_spec())
        throw PipelineError(
            error_message(where, "the new function's outputs",
                          fmt::format("{}, which its consumers take", specs_str(current.output_spec())),
                          specs_str(v.step.output_spec())));
    } else {
      v.step = current;
    }
    v.acc = change.acc;
    if (!change.acc.empty()) acc_given_ = change.acc;
    waiting_.push_back(std::move(v));
  }

  void barrier_placed(uint64_t seq) override {
    std::lock_guard lock(version_mutex_);
    for (Version& v : waiting_) {
      v.from_seq = seq;
      v.before = version_;
      version_ = std::make_shared<const Version>(std::move(v));
      updated_.store(true, std::memory_order_release);
      logger().info("{}: updated from message {}", who(), seq);
    }
    waiting_.clear();
  }

 private:
  // Live updates (Pipeline::update): each version of a stage applies from
  // the message a barrier was placed on; older messages keep the one before.
  struct Version {
    Step step;
    uint64_t from_seq = 0;
    Tensors acc;  // the accumulator it starts with; empty: the one it finds
    std::shared_ptr<const Version> before;
  };

  std::string who() const { return "stage '" + name() + "'"; }

  // Starts message `in`: the accumulator as it stands at a barrier, then
  // the step, whose outputs may still be computing. A step that cannot start
  // fails the message here.
  Envelope start(const Envelope& in, NodeContext& ctx) {
    Envelope out{in.seq, {}, in.skipped, in.credit, in.born, in.barrier};
    if (in.barrier && stateful()) ctx.reached(in.barrier, ctx.storing() ? host_copies(acc_) : Tensors{}, {});
    const Step& step = step_for(in.seq, stateful() ? &acc_ : nullptr);
    if (in.skipped) return out;
    try {
      Tensors placed = step.place(in.tensors);
      Tensors local;
      Tensors& acc = stateful() ? acc_ : local;
      out.tensors = step.run(placed, acc, ctx.output_memory());
      stage_tags(options_.tags, options_.set_tags, in, out);
    } catch (const std::exception& e) {
      fail(out, e.what(), std::current_exception(), ctx);
    }
    return out;
  }

  // The message failed here: reported to the pipeline's error policy, and
  // passed on skipped so that the nodes after it move on.
  static void fail(Envelope& out, const std::string& what, std::exception_ptr cause, NodeContext& ctx) {
    ctx.fail(out.seq, what, std::move(cause));
    out.skipped = true;
    out.tensors.clear();
  }
  bool stateful() const { return !options_.acc.empty(); }
  void trace(const std::vector<Spec>& inputs) {
    Function f = tracer_(step_parameters(inputs, options_.acc, who()));
    std::vector<Spec> outputs = Step::outputs_of(f, inputs, options_.acc, who());
    traced_.emplace(Traced{std::move(f), inputs, std::move(outputs)});
  }

  // The step for message `seq`; a stateful stage passes its accumulator,
  // which a version starting at `seq` with an accumulator replaces.
  const Step& step_for(uint64_t seq, Tensors* stage_acc) {
    if (!updated_.load(std::memory_order_acquire)) return *step_;
    std::shared_ptr<const Version> v;
    {
      std::lock_guard lock(version_mutex_);
      v = version_;
    }
    while (v && v->from_seq > seq) v = v->before;
    if (!v) return *step_;
    if (stage_acc && v->from_seq == seq && !v->acc.empty()) *stage_acc = v->step.initial_acc(v->acc);
    return v->step;  // versions live as long as the node: the chain only grows
  }

  std::function<Function(const std::vector<Spec>&)> tracer_;
  StageOptions options_;
  // The function traced for its inputs, once they are known.
  struct Traced {
    Function function;
    std::vector<Spec> inputs, outputs;
  };
  std::optional<Traced> traced_;
  std::optional<Step> step_;  // compiled when the run starts (resolve)
  Tensors acc_;                             // touched only by the serial node of the stage
  std::mutex version_mutex_;                // guards the two below
  std::shared_ptr<const Version> version_;  // newest; null: `step_` alone
  std::vector<Version> waiting_;            // updates for the next barrier
  Tensors acc_given_;                       // the newest accumulator value given (options, then updates)
  std::atomic<bool> updated_{false};
  std::mutex failure_mutex_;  // a message whose outputs fail on several events is failed once
};

}  // namespace

std::unique_ptr<PipelineNode> stage_node(std::string name,
                                         std::function<Function(const std::vector<Spec>&)> tracer,
                                         StageOptions options) {
  return std::make_unique<StageNode>(std::move(name), std::move(tracer), std::move(options));
}

}  // namespace sluice
