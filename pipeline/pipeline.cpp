// Building a pipeline, checking it, and the life of a run. The oneTBB graph
// itself is made in pipeline_graph.cpp.

#include <algorithm>

#include "devices/log.h"
#include "pipeline/pipeline_impl.h"

namespace sluice {

std::optional<std::vector<Spec>> NodeRec::out_spec() const {
  if (kind == Kind::Source) return source->spec();
  if (kind == Kind::Stage && step) return step->output_spec();
  return std::nullopt;
}

const char* NodeRec::kind_name() const {
  switch (kind) {
    case Kind::Source: return "source";
    case Kind::Stage: return "stage";
    case Kind::Sink: return "sink";
  }
  return "node";
}

const NodeMetrics& PipelineResult::metrics_of(const std::string& name) const {
  for (const NodeMetrics& m : metrics)
    if (m.name == name) return m;
  throw PipelineError("metrics_of: no node named '" + name + "'");
}

Pipeline::Pipeline(PipelineOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.capacity == 0) throw PipelineError("pipeline: capacity: expected at least 1, found 0");
  impl_->options = options;
}

Pipeline::~Pipeline() {
  Impl& m = *impl_;
  if (m.waiter.joinable()) {
    cancel();
    m.waiter.join();
  } else if (m.started && !m.drained) {
    cancel();
    m.drain();
  }
}

namespace {
void check_name(const std::vector<std::unique_ptr<NodeRec>>& nodes, const std::string& name) {
  if (name.empty()) throw PipelineError("pipeline: expected a node name, found an empty one");
  for (const auto& n : nodes)
    if (n->name == name) throw PipelineError("pipeline: a node named '" + name + "' already exists");
}
}  // namespace

NodeId Pipeline::source(std::string name, std::shared_ptr<Source> source) {
  check_name(impl_->nodes, name);
  if (!source) throw PipelineError("source '" + name + "': expected a source, found null");
  auto rec = std::make_unique<NodeRec>();
  rec->kind = NodeRec::Kind::Source;
  rec->name = std::move(name);
  rec->source = std::move(source);
  impl_->nodes.push_back(std::move(rec));
  return {static_cast<int>(impl_->nodes.size()) - 1};
}

NodeId Pipeline::add_stage(std::string name, std::function<Function(const std::vector<Spec>&)> tracer,
                           StageOptions options) {
  check_name(impl_->nodes, name);
  std::string who = "stage '" + name + "'";
  if (options.concurrency < 1)
    throw PipelineError(who + ": concurrency: expected at least 1, found " + std::to_string(options.concurrency));
  if (options.concurrency > 1 && !options.acc.empty())
    throw PipelineError(who + ": concurrency: a stage with an accumulator runs one message at a time, found " +
                        std::to_string(options.concurrency));
  auto rec = std::make_unique<NodeRec>();
  rec->kind = NodeRec::Kind::Stage;
  rec->name = std::move(name);
  rec->tracer = std::move(tracer);
  rec->options = std::move(options);
  if (!rec->options.input.empty()) {
    // Known inputs: trace and compile now, so that connect can check specs.
    Function f = rec->tracer(step_parameters(rec->options.input, rec->options.acc, who));
    rec->step.emplace(f, rec->options.input, rec->options.acc, rec->options.device, who);
  }
  impl_->nodes.push_back(std::move(rec));
  return {static_cast<int>(impl_->nodes.size()) - 1};
}

NodeId Pipeline::sink(std::string name, std::shared_ptr<Sink> sink) {
  check_name(impl_->nodes, name);
  if (!sink) throw PipelineError("sink '" + name + "': expected a sink, found null");
  auto rec = std::make_unique<NodeRec>();
  rec->kind = NodeRec::Kind::Sink;
  rec->name = std::move(name);
  rec->sink = std::move(sink);
  impl_->nodes.push_back(std::move(rec));
  return {static_cast<int>(impl_->nodes.size()) - 1};
}

void Pipeline::connect(NodeId from, NodeId to) {
  auto& nodes = impl_->nodes;
  auto valid = [&](NodeId id) { return id.index >= 0 && id.index < static_cast<int>(nodes.size()); };
  if (!valid(from) || !valid(to)) throw PipelineError("connect: expected node ids returned by this pipeline");
  if (impl_->started) throw PipelineError("connect: the pipeline has started; build it before running it");
  NodeRec& a = *nodes[static_cast<size_t>(from.index)];
  NodeRec& b = *nodes[static_cast<size_t>(to.index)];
  std::string edge = a.kind_name() + std::string(" '") + a.name + "' -> " + b.kind_name() + " '" + b.name + "'";
  if (b.kind == NodeRec::Kind::Source) throw PipelineError("connect " + edge + ": a source has no inputs");
  if (a.kind == NodeRec::Kind::Sink) throw PipelineError("connect " + edge + ": a sink has no outputs");
  if (b.inputs.size() == 4) throw PipelineError("connect " + edge + ": at most 4 inputs can be joined, found a 5th");
  if (std::find(b.inputs.begin(), b.inputs.end(), from.index) != b.inputs.end())
    throw PipelineError("connect " + edge + ": already connected");
  // The producer's specs must be the consumer's next input specs.
  if (b.kind == NodeRec::Kind::Stage && b.step) {
    if (auto produced = a.out_spec()) {
      size_t offset = 0;
      for (int i : b.inputs) offset += nodes[static_cast<size_t>(i)]->out_spec().value_or(std::vector<Spec>{}).size();
      const std::vector<Spec>& want = b.step->input_spec();
      std::vector<Spec> expected;
      for (size_t k = offset; k < want.size() && k < offset + produced->size(); ++k) expected.push_back(want[k]);
      if (offset + produced->size() > want.size() || expected != *produced)
        throw PipelineError("connect " + edge + ": '" + a.name + "' produces " + specs_str(*produced) + ", '" +
                            b.name + "' expects " + specs_str(want) +
                            (b.inputs.empty() ? "" : " (of which " + std::to_string(offset) + " come from earlier inputs)"));
    }
  }
  a.outputs.push_back(to.index);
  b.inputs.push_back(from.index);
}

void Pipeline::Impl::validate_and_trace() {
  // Kahn's algorithm: a topological order, or the nodes of a cycle.
  std::vector<int> indegree(nodes.size()), order;
  for (size_t i = 0; i < nodes.size(); ++i) indegree[i] = static_cast<int>(nodes[i]->inputs.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    if (indegree[i] == 0) order.push_back(static_cast<int>(i));
  for (size_t k = 0; k < order.size(); ++k)
    for (int j : nodes[static_cast<size_t>(order[k])]->outputs)
      if (--indegree[static_cast<size_t>(j)] == 0) order.push_back(j);
  if (order.size() != nodes.size()) {
    std::string cycle;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (indegree[i] > 0) cycle += (cycle.empty() ? "'" : ", '") + nodes[i]->name + "'";
    throw PipelineError("pipeline: the edges form a cycle through " + cycle);
  }
  for (int i : order) {
    NodeRec& n = *nodes[static_cast<size_t>(i)];
    n.keeps_order = !(n.kind == NodeRec::Kind::Stage && !n.options.ordered) &&
                    std::all_of(n.inputs.begin(), n.inputs.end(),
                                [&](int p) { return nodes[static_cast<size_t>(p)]->keeps_order; });
    if (n.kind != NodeRec::Kind::Source && n.inputs.empty())
      throw PipelineError(std::string(n.kind_name()) + " '" + n.name + "' is not connected to any input");
    if (n.kind == NodeRec::Kind::Source && n.outputs.empty())
      throw PipelineError("source '" + n.name + "' is not connected to anything");
    if (n.kind != NodeRec::Kind::Stage) continue;
    std::vector<Spec> in;
    for (int p : n.inputs) {
      auto s = nodes[static_cast<size_t>(p)]->out_spec();
      in.insert(in.end(), s->begin(), s->end());
    }
    std::string who = "stage '" + n.name + "'";
    if (!n.step) {
      Function f = n.tracer(step_parameters(in, n.options.acc, who));
      n.step.emplace(f, in, n.options.acc, n.options.device, who);
    } else if (in != n.step->input_spec()) {
      throw PipelineError(who + ": expects " + specs_str(n.step->input_spec()) + ", its inputs produce " +
                          specs_str(in));
    }
    n.acc = n.step->initial_acc(n.options.acc);
  }
}

void Pipeline::Impl::launch() {
  if (started) throw PipelineError("start: the pipeline was already started (a Pipeline runs once)");
  validate_and_trace();
  started = true;
  build_graph();
  for (auto& start_source : starters) start_source();
}

void Pipeline::Impl::drain() {
  graph->wait_for_all();
  drained = true;
}

void Pipeline::start() {
  impl_->launch();
  // A thread of its own, so that the run goes on even where oneTBB has no
  // worker threads (one core) until wait() is called.
  impl_->waiter = std::thread([&m = *impl_] { m.drain(); });
}

PipelineResult Pipeline::wait() {
  Impl& m = *impl_;
  if (!m.started) throw PipelineError("wait: the pipeline was not started");
  if (m.waiter.joinable()) m.waiter.join();
  if (!m.drained) m.drain();
  PipelineResult result = m.collect();
  result.metrics = metrics();
  if (!m.first_error.empty() && m.options.on_error == ErrorPolicy::Stop) throw PipelineError(m.first_error);
  return result;
}

PipelineResult Pipeline::run() {
  // The caller drains the graph itself, taking part in its work: no thread
  // to start and no hand-off to one.
  impl_->launch();
  return wait();
}

void Pipeline::cancel() {
  Impl& m = *impl_;
  {
    std::lock_guard lock(m.mutex);
    if (m.stopping) return;
    m.stopping = true;
    m.cancelled = true;
  }
  m.stop_sources();
}

// Called once, by whoever set `stopping`: cancel, or a node body failing
// under ErrorPolicy::Stop (the graph then stops taking new work).
void Pipeline::Impl::stop_sources() {
  for (auto& c : credits) c->finishing = false;
  for (const auto& n : nodes)
    if (auto push = std::dynamic_pointer_cast<PushSource>(n->source)) push->unwire();
  for (auto& let_go : push_holds) let_go();
  if (graph) graph->cancel();
}

void Pipeline::Impl::report_error(const NodeRec& node, uint64_t seq, const std::string& what) {
  std::string message = std::string(node.kind_name()) + " '" + node.name + "' failed on message " +
                        std::to_string(seq) + ": " + what;
  logger().warn("{}", message);
  bool stop = false;
  {
    std::lock_guard lock(mutex);
    if (first_error.empty()) first_error = message;
    if (options.on_error == ErrorPolicy::Stop && !stopping) stopping = stop = true;
  }
  if (stop) stop_sources();
}

std::vector<NodeMetrics> Pipeline::metrics() const {
  std::vector<NodeMetrics> out;
  const auto& nodes = impl_->nodes;
  for (const auto& n : nodes) {
    const NodeCounters& c = n->counters;
    NodeMetrics m;
    m.name = n->name;
    m.kind = n->kind_name();
    m.messages_in = c.messages_in.load();
    m.messages_out = c.messages_out.load();
    m.bytes_in = c.bytes_in.load();
    m.bytes_out = c.bytes_out.load();
    m.errors = c.errors.load();
    m.skipped = c.skipped.load();
    m.busy_seconds = static_cast<double>(c.busy_ns.load()) * 1e-9;
    // Waiting: what the slowest producer has sent that this node has not taken.
    uint64_t arrived = UINT64_MAX;
    for (int p : n->inputs) arrived = std::min(arrived, nodes[static_cast<size_t>(p)]->counters.messages_out.load());
    m.queue_depth = n->inputs.empty() ? 0 : static_cast<int64_t>(arrived) - static_cast<int64_t>(m.messages_in);
    if (m.queue_depth < 0) m.queue_depth = 0;
    m.latency_p50_us = c.latency.percentile(0.5);
    m.latency_p99_us = c.latency.percentile(0.99);
    out.push_back(std::move(m));
  }
  return out;
}

std::string Pipeline::metrics_json() const { return sluice::metrics_json(metrics()); }

PipelineResult Pipeline::Impl::collect() {
  for (const auto& n : nodes)
    if (n->sink) n->sink->finish();
  PipelineResult r;
  for (const auto& n : nodes) {
    if (n->kind != NodeRec::Kind::Stage || n->acc.empty()) continue;
    try {
      for (const Tensor& t : n->acc) t.wait();
      r.accumulators[n->name] = n->acc;
    } catch (const std::exception& e) {
      if (first_error.empty()) first_error = "stage '" + n->name + "': its accumulator failed: " + e.what();
    }
  }
  for (auto& c : credits) c->live = false;
  r.cancelled = cancelled;
  return r;
}

}  // namespace sluice
