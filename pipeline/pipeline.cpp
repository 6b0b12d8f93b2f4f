// Building a pipeline, checking it, and the life of a run. The oneTBB graph
// itself is made in pipeline_graph.cpp.

#include <algorithm>

#include "devices/log.h"
#include "pipeline/checkpoint_store.h"
#include "pipeline/pipeline_impl.h"

namespace sluice {

std::optional<std::vector<Spec>> NodeRec::out_spec() const {
  if (kind == Kind::Source) return source->spec();
  if (kind == Kind::Stage && step) return step->output_spec();
  return std::nullopt;
}

const Step& NodeRec::step_for(uint64_t seq, Tensors* stage_acc) {
  if (!updated.load(std::memory_order_acquire)) return *step;
  std::shared_ptr<const Version> v;
  {
    std::lock_guard lock(version_mutex);
    v = version;
  }
  while (v && v->from_seq > seq) v = v->before;
  if (!v) return *step;
  if (stage_acc && v->from_seq == seq && !v->acc.empty()) *stage_acc = v->step.initial_acc(v->acc);
  return v->step;  // versions live as long as the node: the chain only grows
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
  if (validated) return;
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
    n.acc_init = n.options.acc;
  }
  // Connected parts: their sources place barriers together (checkpoints.h).
  std::vector<int> part(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) part[i] = static_cast<int>(i);
  auto root = [&](int i) {
    while (part[static_cast<size_t>(i)] != i) i = part[static_cast<size_t>(i)];
    return i;
  };
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int j : nodes[i]->inputs) part[static_cast<size_t>(root(j))] = root(static_cast<int>(i));
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i]->component = root(static_cast<int>(i));
  if (options.checkpoint_interval.set() || !options.checkpoint_dir.empty()) {
    if (options.checkpoint_interval.messages > 0 && options.checkpoint_interval.time.count() > 0)
      throw PipelineError("pipeline: checkpoint_interval: expected messages or time, found both");
    for (const auto& n : nodes)
      if ((n->kind == NodeRec::Kind::Sink || !n->acc.empty()) && !n->keeps_order)
        throw PipelineError(std::string(n->kind_name()) + " '" + n->name +
                            "': checkpoint barriers need its messages in order, found a stage before it with "
                            "`ordered` off");
  }
  validated = true;
}

void Pipeline::Impl::start_checkpoints() {
  std::vector<CheckpointCoordinator::Node> list;
  for (const auto& n : nodes)
    list.push_back({.name = n->name,
                    .component = n->component,
                    .source = n->source,
                    .sink = n->sink,
                    .participant = n->kind == NodeRec::Kind::Sink || !n->acc.empty(),
                    .start = n->seq_offset});
  checkpoints =
      std::make_unique<CheckpointCoordinator>(options, std::move(list), restored ? restored->number : 0);
  checkpoints->on_barrier = [this](int component, uint64_t seq) { install_updates(component, seq); };
  for (const auto& n : nodes) {
    if (n->source)
      n->source->checkpointing(checkpoints->storing());
    else if (n->sink)
      n->sink->checkpointing(checkpoints->storing());
  }
}

void Pipeline::Impl::install_updates(int component, uint64_t seq) {
  for (const auto& n : nodes) {
    if (n->kind != NodeRec::Kind::Stage || n->component != component) continue;
    std::lock_guard lock(n->version_mutex);
    for (NodeRec::Version& v : n->waiting) {
      v.from_seq = seq;
      v.before = n->version;
      n->version = std::make_shared<const NodeRec::Version>(std::move(v));
      n->updated.store(true, std::memory_order_release);
      logger().info("stage '{}': updated from message {}", n->name, seq + n->seq_offset);
    }
    n->waiting.clear();
  }
}

RestoreReport Pipeline::restore(const std::string& dir) {
  Impl& m = *impl_;
  if (m.started) throw PipelineError("restore: the pipeline has started; restore before start() or run()");
  if (m.restored) throw PipelineError("restore: already restored");
  const std::string where = dir.empty() ? m.options.checkpoint_dir : dir;
  if (where.empty())
    throw CheckpointError(
        "restore: expected a checkpoint directory (the argument or checkpoint_dir), found none");
  m.validate_and_trace();
  CheckpointLookup found = CheckpointStore(where, {.retain = m.options.checkpoint_retain}).latest();
  RestoreReport report;
  for (const std::string& s : found.skipped) logger().warn("restore from {}: passed over {}", where, s);
  report.skipped = std::move(found.skipped);
  if (!found.checkpoint) {
    logger().info("restore from {}: no complete checkpoint, starting afresh", where);
    // Output of a run that never completed a checkpoint comes again too.
    for (const auto& n : m.nodes)
      if (n->sink) n->sink->resume(0, {});
    return report;
  }
  m.apply_checkpoint(*found.checkpoint, where);
  report.checkpoint = found.checkpoint->number;
  logger().info("restored checkpoint {} from {}", report.checkpoint, where);
  return report;
}

void Pipeline::Impl::apply_checkpoint(const Checkpoint& c, const std::string& where) {
  const std::string at = "restore from " + where + ", checkpoint " + std::to_string(c.number) + ": ";
  // Everything is checked before anything changes.
  std::map<int, int64_t> part_position;
  for (const auto& n : nodes) {
    if (n->kind == NodeRec::Kind::Source) {
      auto it = c.positions.find(n->name);
      if (it == c.positions.end())
        throw CheckpointError(at + "source '" + n->name +
                              "': expected its position, found none (not this pipeline's?)");
      bool accepted = std::find(options.at_most_once.begin(), options.at_most_once.end(), n->name) !=
                      options.at_most_once.end();
      if (!n->source->replayable() && !accepted)
        throw CheckpointError(
            at + "source '" + n->name +
            "' cannot replay its messages; name it in PipelineOptions::at_most_once to resume it "
            "from where it is (its messages since the checkpoint are then lost)");
      auto [p, fresh] = part_position.emplace(n->component, it->second);
      if (!fresh && p->second != it->second)
        throw CheckpointError(at + "source '" + n->name + "': expected position " +
                              std::to_string(p->second) + " as the sources joined with it, found " +
                              std::to_string(it->second));
    }
    if (n->kind != NodeRec::Kind::Stage || n->acc.empty()) continue;
    auto it = c.accumulators.find(n->name);
    if (it == c.accumulators.end())
      throw CheckpointError(at + "stage '" + n->name + "': expected its accumulator, found none");
    std::vector<Spec> want, found;
    for (const Tensor& t : n->acc) want.push_back(t.spec());
    for (const Tensor& t : it->second) found.push_back(t.spec());
    if (want != found)
      throw CheckpointError(at + "stage '" + n->name + "': expected an accumulator " + specs_str(want) +
                            ", found " + specs_str(found));
  }
  for (const auto& [name, acc] : c.accumulators) {
    bool known = std::any_of(nodes.begin(), nodes.end(), [&, &stage = name](const auto& n) {
      return n->name == stage && n->kind == NodeRec::Kind::Stage && !n->acc.empty();
    });
    if (!known)
      throw CheckpointError(at + "stage '" + name +
                            "': expected a stage with an accumulator of that name, found none");
  }
  for (const auto& n : nodes) {
    auto part = part_position.find(n->component);
    n->seq_offset = part == part_position.end() ? 0 : static_cast<uint64_t>(part->second);
    auto state = c.states.find(n->name);
    const std::string& text = state == c.states.end() ? std::string() : state->second;
    if (n->kind == NodeRec::Kind::Stage && !n->acc.empty())
      n->acc = n->step->initial_acc(c.accumulators.at(n->name));
    if (n->kind == NodeRec::Kind::Source && n->source->replayable()) n->source->resume(n->seq_offset, text);
    if (n->kind == NodeRec::Kind::Sink) n->sink->resume(c.number, text);
  }
  restored = c;
}

void Pipeline::update(const std::string& stage, StageUpdate change) {
  impl_->update(stage, std::move(change));
}

void Pipeline::Impl::update(const std::string& stage, StageUpdate change) {
  auto it = std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n->name == stage; });
  const std::string who = "update of stage '" + stage + "': ";
  if (it == nodes.end() || (*it)->kind != NodeRec::Kind::Stage)
    throw PipelineError(who + "expected a stage of that name, found " +
                        (it == nodes.end() ? std::string("none") : std::string("a ") + (*it)->kind_name()));
  if (!options.checkpoint_interval.set() && options.checkpoint_dir.empty())
    throw PipelineError(who +
                        "updates apply at a barrier, and this pipeline places none: set checkpoint_interval");
  if (!change.function && change.acc.empty())
    throw PipelineError(who + "expected a function or an accumulator, found neither");
  if (!started) validate_and_trace();
  NodeRec& n = **it;
  std::lock_guard lock(n.version_mutex);
  const Step& current = !n.waiting.empty() ? n.waiting.back().step : n.version ? n.version->step : *n.step;
  const Tensors& acc_now =
      !n.waiting.empty() && !n.waiting.back().acc.empty() ? n.waiting.back().acc : n.acc_init;
  if (!change.acc.empty() && !change.function) {
    std::vector<Spec> want, found;
    for (const Tensor& t : acc_now) want.push_back(t.spec());
    for (const Tensor& t : change.acc) found.push_back(t.spec());
    if (want != found)
      throw PipelineError(who + "expected an accumulator " + specs_str(want) + ", found " + specs_str(found));
  }
  NodeRec::Version v;
  if (change.function) {
    try {
      v.step = Step(*change.function, current.input_spec(), change.acc.empty() ? acc_now : change.acc,
                    current.device(), "stage '" + stage + "'");
    } catch (const Error& e) { throw PipelineError(who + "the new function does not fit: " + e.what()); }
    bool to_stages = std::any_of(n.outputs.begin(), n.outputs.end(), [&](int o) {
      return nodes[static_cast<size_t>(o)]->kind == NodeRec::Kind::Stage;
    });
    if (to_stages && v.step.output_spec() != current.output_spec())
      throw PipelineError(who + "its consumers take " + specs_str(current.output_spec()) +
                          ", the new function produces " + specs_str(v.step.output_spec()));
  } else {
    v.step = current;
  }
  v.acc = change.acc;
  n.waiting.push_back(std::move(v));
}

CheckpointMetrics Pipeline::checkpoint_metrics() const {
  return impl_->checkpoints ? impl_->checkpoints->metrics() : CheckpointMetrics{};
}

void Pipeline::Impl::launch() {
  if (started) throw PipelineError("start: the pipeline was already started (a Pipeline runs once)");
  validate_and_trace();
  started = true;
  start_checkpoints();
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
  m.checkpoints->finish();
  result.checkpoints = m.checkpoints->metrics();
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
  // A run that ended as its sources did is checkpointed once more, before
  // the sinks finish, so that a restore finds nothing left to do.
  if (!cancelled && first_error.empty() && checkpoints->storing()) {
    std::map<std::string, Tensors> final;
    for (const auto& [name, acc] : r.accumulators) final[name] = host_copies(acc);
    try {
      checkpoints->final_checkpoint(std::move(final));
    } catch (const std::exception& e) {
      first_error = std::string("the final checkpoint failed: ") + e.what();
    }
  }
  for (const auto& n : nodes)
    if (n->sink) n->sink->finish();
  for (auto& c : credits) c->live = false;
  r.cancelled = cancelled;
  return r;
}

}  // namespace sluice
