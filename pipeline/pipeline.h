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

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/ops.h"
#include "pipeline/metrics.h"
#include "pipeline/sinks.h"
#include "pipeline/sources.h"
#include "stream/step.h"

namespace sluice {

enum class ErrorPolicy : uint8_t {
  Stop,  // the first failing message cancels the run; run() throws PipelineError
  Skip,  // a failing message is dropped and counted; the others go on
};

struct PipelineOptions {
  ErrorPolicy on_error = ErrorPolicy::Stop;
  size_t capacity = 64;  // messages of one source in flight at once
};

struct StageOptions {
  // Specs of one incoming message. Empty: the producers' output specs, in
  // connect order, resolved when the pipeline starts.
  std::vector<Spec> input{};
  Tensors acc{};            // the accumulator's initial value (copied to the device)
  Device device = host();
  int concurrency = 1;    // copies at once; stateless stages only
  bool ordered = true;    // off: what follows takes this stage's outputs as they come
};

struct NodeId {
  int index = -1;
};

struct PipelineResult {
  std::map<std::string, Tensors> accumulators;  // by stage name, stages with one
  std::vector<NodeMetrics> metrics;             // one per node, in creation order
  bool cancelled = false;
  const NodeMetrics& metrics_of(const std::string& name) const;
};

class Pipeline {
 public:
  explicit Pipeline(PipelineOptions options = {});
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  NodeId source(std::string name, std::shared_ptr<Source> source);

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

  NodeId sink(std::string name, std::shared_ptr<Sink> sink);
  // A callback taking const Tensors& (the whole message) or const Tensor& (its first tensor).
  template <typename F>
  NodeId sink(std::string name, F&& fn) {
    if constexpr (std::is_convertible_v<F, std::shared_ptr<Sink>>) {
      return sink(std::move(name), std::shared_ptr<Sink>(std::forward<F>(fn)));
    } else if constexpr (std::is_invocable_v<F&, const Tensors&>) {
      return sink(std::move(name), sinks::callback(std::forward<F>(fn)));
    } else {
      return sink(std::move(name), sinks::callback([fn](const Tensors& t) { fn(t.at(0)); }));
    }
  }

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

  std::vector<NodeMetrics> metrics() const;
  std::string metrics_json() const;

 private:
  struct Impl;
  NodeId add_stage(std::string name, std::function<Function(const std::vector<Spec>&)> tracer,
                   StageOptions options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
