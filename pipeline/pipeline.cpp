// Building a pipeline, checking it, and the life of a run. The oneTBB graph
// itself is made in pipeline_graph.cpp; what each kind of node does, in its
// own file (node.h).

#include <algorithm>

#include <sluice/base/detail/log.h>
#include <sluice/ops/detail/error_format.h>
#include <sluice/pipeline/checkpoint_store.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/detail/pipeline_impl.h>

namespace sluice {

const NodeMetrics& PipelineResult::metrics_of(const std::string& name) const {
  for (const NodeMetrics& m : metrics)
    if (m.name == name) return m;
  throw PipelineError(error_message("metrics_of", fmt::format("no node named '{}'", name), "", ""));
}

Pipeline::Pipeline(PipelineOptions options) : impl_(std::make_unique<Impl>()) {
  if (options.capacity == 0)
    throw PipelineError(error_message("pipeline", "capacity", "at least 1", options.capacity));
  impl_->options = options;
  impl_->owner = this;
  impl_->open_run_log();
}

Pipeline::~Pipeline() {
  Impl& m = *impl_;
  m.stop_run_log(/*last=*/false);
  if (m.metrics_server) m.metrics_server->stop();
  if (m.waiter.joinable()) {
    cancel();
    m.waiter.join();
  } else if (m.started && !m.drained) {
    cancel();
    m.drain();
  }
  if (m.started) m.end_credits();
}

void Pipeline::Impl::end_credits() {
  for (auto& c : credits) {
    c->live.store(false);
    while (c->releasing.load() > 0) std::this_thread::yield();
  }
  // A credit given back after the drain (as sinks finished, their threads
  // letting go of what they held) set a source's node going again: its task
  // ends before the nodes are destroyed (seen: a SIGSEGV in an input_node's
  // task as a failed run's pipeline was destroyed).
  graph->wait_for_all();
}

std::string Pipeline::Impl::describe(int index) const {
  const PipelineNode& n = *slots[static_cast<size_t>(index)].node;
  return std::string(n.kind()) + " '" + n.name() + "'";
}

NodeId Pipeline::Impl::add(std::unique_ptr<PipelineNode> node, std::string process) {
  if (started)
    throw PipelineError(
        error_message("pipeline", "the pipeline has started; build it before running it", "", ""));
  const std::string& name = node->name();
  if (name.empty()) throw PipelineError(error_message("pipeline", "", "a node name", "an empty one"));
  for (const Slot& s : slots)
    if (s.node->name() == name)
      throw PipelineError(
          error_message("pipeline", fmt::format("a node named '{}' already exists", name), "", ""));
  slots.push_back(Slot{.node = std::move(node), .process = std::move(process)});
  return {static_cast<int>(slots.size()) - 1, id};
}

NodeId Pipeline::add(std::unique_ptr<PipelineNode> node, NodeOptions options) {
  if (!node) throw PipelineError(error_message("pipeline", "add", "a node", "null"));
  return impl_->add(std::move(node), std::move(options.process));
}

NodeId Pipeline::source(std::string name, std::shared_ptr<Source> source, NodeOptions options) {
  if (!source) throw PipelineError(error_message("source '" + name + "'", "", "a source", "null"));
  return impl_->add(source->make_node(std::move(name), source), std::move(options.process));
}

NodeId Pipeline::add_stage(std::string name, std::function<Function(const std::vector<Spec>&)> tracer,
                           StageOptions options) {
  std::string process = options.process;
  if ((options.tags == TagRule::Set) != static_cast<bool>(options.set_tags))
    throw PipelineError(error_message(
        "stage '" + name + "'", "set_tags", "a function with TagRule::Set, and none with another rule",
        options.set_tags ? "a function with another rule" : "none with TagRule::Set"));
  // Whatever the user's function throws while traced (now, or when the
  // run resolves the inputs) is the stage's error, its cause kept.
  tracer = [who = "stage '" + name + "'", tracer = std::move(tracer)](const std::vector<Spec>& params) {
    try {
      return tracer(params);
    } catch (const PipelineError&) {
      throw;
    } catch (const std::exception& e) {
      throw PipelineError(
          error_message(who, fmt::format("tracing its function failed: {}", e.what()), "", ""),
          std::current_exception());
    }
  };
  // A negative size goes to the batched kind too, which refuses it.
  bool batched = options.batch.size != 0;
  return impl_->add(batched ? batched_stage_node(std::move(name), std::move(tracer), std::move(options))
                            : stage_node(std::move(name), std::move(tracer), std::move(options)),
                    std::move(process));
}

NodeId Pipeline::sink(std::string name, std::shared_ptr<Sink> sink, NodeOptions options) {
  if (!sink) throw PipelineError(error_message("sink '" + name + "'", "", "a sink", "null"));
  return impl_->add(sink_node(std::move(name), std::move(sink)), std::move(options.process));
}

NodeId Pipeline::zip_by_time(std::string name, ZipOptions options, NodeOptions node) {
  return impl_->add(zip_by_time_node(std::move(name), std::move(options)), std::move(node.process));
}

NodeId Pipeline::event_window(std::string name, EventWindowOptions options, NodeOptions node) {
  return impl_->add(event_window_node(std::move(name), std::move(options)), std::move(node.process));
}

void Pipeline::connect(NodeId from, NodeId to) {
  Impl& m = *impl_;
  for (NodeId id : {from, to})
    if (id.pipeline != m.id || id.index < 0 || id.index >= static_cast<int>(m.slots.size()))
      throw PipelineError(error_message(
          "connect", "node id", "one this pipeline returned",
          id.pipeline == m.id || id.pipeline == 0 ? fmt::format("index {}, which it has not", id.index)
                                                  : "one of another pipeline"));
  if (m.started)
    throw PipelineError(
        error_message("connect", "the pipeline has started; build it before running it", "", ""));
  Impl::Slot& a = m.slot(from.index);
  Impl::Slot& b = m.slot(to.index);
  std::string edge = m.describe(from.index) + " -> " + m.describe(to.index);
  if (b.node->max_inputs() == 0)
    throw PipelineError(
        error_message("connect " + edge, fmt::format("a {} has no inputs", b.node->kind()), "", ""));
  if (!a.node->has_output())
    throw PipelineError(
        error_message("connect " + edge, fmt::format("a {} has no outputs", a.node->kind()), "", ""));
  if (b.inputs.size() == b.node->max_inputs())
    throw PipelineError(error_message("connect " + edge, "inputs",
                                      fmt::format("at most {} (inputs can be joined)", b.node->max_inputs()),
                                      "one more"));
  if (std::find(b.inputs.begin(), b.inputs.end(), from.index) != b.inputs.end())
    throw PipelineError(error_message("connect " + edge, "already connected", "", ""));
  // The producer's specs must be the consumer's next input specs.
  std::optional<std::vector<Spec>> want = b.node->input_spec();
  std::optional<std::vector<Spec>> produced = a.node->output_spec();
  if (want && produced) {
    size_t offset = 0;
    for (int i : b.inputs) offset += m.slot(i).node->output_spec().value_or(std::vector<Spec>{}).size();
    std::vector<Spec> expected;
    for (size_t k = offset; k < want->size() && k < offset + produced->size(); ++k)
      expected.push_back((*want)[k]);
    if (offset + produced->size() > want->size() || expected != *produced)
      throw PipelineError(error_message(
          "connect " + edge,
          fmt::format("'{}' produces {}, '{}' expects {}{}", a.node->name(), specs_str(*produced),
                      b.node->name(), specs_str(*want),
                      b.inputs.empty() ? "" : fmt::format(" (of which {} come from earlier inputs)", offset)),
          "", ""));
  }
  a.outputs.push_back(to.index);
  b.inputs.push_back(from.index);
}

void Pipeline::Impl::validate_and_trace() {
  if (validated) return;
  resolve_specs();
  log_graph();  // the whole program, before this process's part is cut out of it
  set_flow_origins();
  if (!options.partition.process.empty() || options.partition.placement) partition();
  analyse();
  validated = true;
}

void Pipeline::Impl::resolve_specs() {
  for (int i : topological_order()) {
    Slot& s = slot(i);
    PipelineNode& n = *s.node;
    if (n.max_inputs() == 0) {
      if (s.outputs.empty())
        throw PipelineError(error_message(describe(i), "not connected to anything", "", ""));
      continue;
    }
    if (s.inputs.empty())
      throw PipelineError(error_message(describe(i), "not connected to any input", "", ""));
    std::vector<std::vector<Spec>> in;
    for (int p : s.inputs) {
      std::optional<std::vector<Spec>> given = slot(p).node->output_spec();
      if (!given)
        throw PipelineError(
            error_message(describe(p), "its output specs are unknown after it was resolved", "", ""));
      in.push_back(std::move(*given));
    }
    n.resolve_inputs(in);
  }
}

std::vector<int> Pipeline::Impl::topological_order() const {
  // Kahn's algorithm: a topological order, or the nodes of a cycle.
  std::vector<int> indegree(slots.size()), order;
  for (size_t i = 0; i < slots.size(); ++i) indegree[i] = static_cast<int>(slots[i].inputs.size());
  for (size_t i = 0; i < slots.size(); ++i)
    if (indegree[i] == 0) order.push_back(static_cast<int>(i));
  for (size_t k = 0; k < order.size(); ++k)
    for (int j : slots[static_cast<size_t>(order[k])].outputs)
      if (--indegree[static_cast<size_t>(j)] == 0) order.push_back(j);
  if (order.size() != slots.size()) {
    std::string cycle;
    for (size_t i = 0; i < slots.size(); ++i)
      if (indegree[i] > 0) cycle += (cycle.empty() ? "'" : ", '") + slots[i].node->name() + "'";
    throw PipelineError(error_message("pipeline", "the edges form a cycle through " + cycle, "", ""));
  }
  return order;
}

void Pipeline::Impl::set_flow_origins() {
  for (int i : topological_order()) {
    Slot& s = slot(i);
    s.flow_origin = s.inputs.empty() ? i : slot(s.inputs.front()).flow_origin;
  }
}

void Pipeline::Impl::analyse() {
  for (int i : topological_order()) {
    Slot& s = slot(i);
    s.keeps_order = !s.node->reorders() &&
                    std::all_of(s.inputs.begin(), s.inputs.end(), [&](int p) { return slot(p).keeps_order; });
  }
  // Outputs a node after them passes on by reference are written in shared memory.
  for (Slot& s : slots)
    if (s.node->input_memory() == OutputMemory::Shared)
      for (int p : s.inputs) slot(p).output_memory = OutputMemory::Shared;
  // Connected parts: their sources place barriers together (checkpoints.h).
  std::vector<int> part(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) part[i] = static_cast<int>(i);
  auto root = [&](int i) {
    while (part[static_cast<size_t>(i)] != i) i = part[static_cast<size_t>(i)];
    return i;
  };
  for (size_t i = 0; i < slots.size(); ++i)
    for (int j : slots[i].inputs) part[static_cast<size_t>(root(j))] = root(static_cast<int>(i));
  for (size_t i = 0; i < slots.size(); ++i) slots[i].component = root(static_cast<int>(i));
  if (options.checkpoint_interval.set() || !options.checkpoint_dir.empty()) {
    if (options.checkpoint_interval.messages > 0 && options.checkpoint_interval.time.count() > 0)
      throw PipelineError(error_message("pipeline", "checkpoint_interval", "messages or time", "both"));
    for (size_t i = 0; i < slots.size(); ++i) {
      // Such a node sees each input's barriers itself: it must hand them in.
      if (slots[i].node->separate_inputs() && !slots[i].node->takes_part())
        throw PipelineError(error_message(describe(static_cast<int>(i)),
                                          "checkpoint barriers cannot be aligned across the separate streams "
                                          "it takes (not yet)",
                                          "a pipeline without checkpoints",
                                          "checkpoint_interval or checkpoint_dir"));
      if (slots[i].node->takes_part() && !slots[i].keeps_order)
        throw PipelineError(
            error_message(describe(static_cast<int>(i)), "checkpoint barriers need its messages in order", "",
                          "a node before it that reorders them (a stage with `ordered` off)"));
    }
  }
}

void Pipeline::Impl::start_checkpoints() {
  std::vector<CheckpointCoordinator::Member> members;
  for (const Slot& s : slots)
    members.push_back({.node = s.node.get(), .component = s.component, .start = s.seq_offset});
  checkpoints =
      std::make_unique<CheckpointCoordinator>(options, std::move(members), restored ? restored->number : 0);
  checkpoints->on_barrier = [this](int component, uint64_t seq) {
    for (Slot& s : slots)
      if (s.component == component) s.node->barrier_placed(seq);
  };
  for (Slot& s : slots) s.node->checkpointing(checkpoints->storing());
}

RestoreReport Pipeline::restore(const std::string& dir) {
  Impl& m = *impl_;
  if (m.started)
    throw PipelineError(
        error_message("restore", "the pipeline has started; restore before start() or run()", "", ""));
  if (m.restored) throw PipelineError(error_message("restore", "already restored", "", ""));
  const std::string where = dir.empty() ? m.options.checkpoint_dir : dir;
  if (where.empty())
    throw CheckpointError(
        error_message("restore", "", "a checkpoint directory (the argument or checkpoint_dir)", "none"));
  m.validate_and_trace();
  CheckpointLookup found = CheckpointStore(where, {.retain = m.options.checkpoint_retain}).latest();
  RestoreReport report;
  for (const std::string& s : found.skipped) logger().warn("restore from {}: passed over {}", where, s);
  report.skipped = std::move(found.skipped);
  if (!found.checkpoint) {
    logger().info("restore from {}: no complete checkpoint, starting afresh", where);
    // Output of a run that never completed a checkpoint comes again too.
    for (Impl::Slot& s : m.slots) s.node->restore(Checkpoint{});
    return report;
  }
  m.apply_checkpoint(*found.checkpoint, where);
  report.checkpoint = found.checkpoint->number;
  logger().info("restored checkpoint {} from {}", report.checkpoint, where);
  return report;
}

void Pipeline::Impl::apply_checkpoint(const Checkpoint& c, const std::string& where) {
  const std::string restoring = fmt::format("restore from {}, checkpoint {}", where, c.number);
  const std::string at = restoring + ": ";
  // Everything is checked before anything changes.
  std::map<int, int64_t> part_position;
  for (size_t i = 0; i < slots.size(); ++i) {
    const Slot& s = slots[i];
    s.node->check(c, at);
    std::optional<int64_t> position = s.node->position(c);
    if (!position) continue;
    const std::string& name = s.node->name();
    bool accepted = std::find(options.at_most_once.begin(), options.at_most_once.end(), name) !=
                    options.at_most_once.end();
    if (!s.node->replays() && !accepted)
      throw CheckpointError(error_message(
          restoring,
          describe(static_cast<int>(i)) +
              " cannot replay its messages; name it in PipelineOptions::at_most_once to resume it "
              "from where it is (its messages since the checkpoint are then lost)",
          "", ""));
    auto [p, fresh] = part_position.emplace(s.component, *position);
    if (!fresh && p->second != *position)
      throw CheckpointError(error_message(at + describe(static_cast<int>(i)), "",
                                          fmt::format("position {} as the sources joined with it", p->second),
                                          *position));
  }
  for (const auto& [name, acc] : c.accumulators) {
    bool known = std::any_of(slots.begin(), slots.end(), [&, &stage = name](const Slot& s) {
      return s.node->name() == stage && s.node->checkpoints_tensors();
    });
    if (!known)
      throw CheckpointError(
          error_message(at + "stage '" + name + "'", "", "a stage with an accumulator of that name", "none"));
  }
  // The plans the run before computed with (the host's measured FFTW
  // plans), taken before anything computes: the restored run goes on bit
  // for bit as that one would have, whatever this process would measure.
  try {
    use_plans(c.plans);
  } catch (const Error& e) {
    throw CheckpointError(error_message(restoring, fmt::format("its plans: {}", e.what()), "", ""));
  }
  for (Slot& s : slots) s.node->restore(c);
  // Where each node's messages are numbered from: its sources' position, or
  // where the numbers of a node before it that numbers its outputs itself
  // (an event window's) go on from.
  std::vector<std::optional<uint64_t>> offsets(slots.size());
  std::function<uint64_t(int)> offset_of = [&](int i) -> uint64_t {
    auto& offset = offsets[static_cast<size_t>(i)];
    if (offset) return *offset;
    const Slot& s = slot(i);
    if (s.inputs.empty()) {
      auto part = part_position.find(s.component);
      offset = part == part_position.end() ? 0 : static_cast<uint64_t>(part->second);
    } else {
      const Slot& before = slot(s.inputs.front());
      offset = before.node->numbers_its_outputs() ? before.node->outputs_numbered_from()
                                                  : offset_of(s.inputs.front());
    }
    return *offset;
  };
  for (size_t i = 0; i < slots.size(); ++i) slots[i].seq_offset = offset_of(static_cast<int>(i));
  restored = c;
}

void Pipeline::update(const std::string& stage, StageUpdate change) {
  impl_->update(stage, std::move(change));
}

void Pipeline::Impl::update(const std::string& stage, StageUpdate change) {
  auto it = std::find_if(slots.begin(), slots.end(), [&](const Slot& s) { return s.node->name() == stage; });
  if (it == slots.end())
    throw PipelineError(error_message("update of stage '" + stage + "'", "", "a stage of that name", "none"));
  if (!options.checkpoint_interval.set() && options.checkpoint_dir.empty())
    throw PipelineError(error_message("update of stage '" + stage + "'",
                                      "updates apply at a barrier, and this pipeline places none: set "
                                      "checkpoint_interval",
                                      "", ""));
  if (!started) validate_and_trace();
  // Consumers that pass the outputs on, or expect specs, take them as they are.
  bool fixed = std::any_of(it->outputs.begin(), it->outputs.end(), [&](int o) {
    const PipelineNode& consumer = *slot(o).node;
    return consumer.has_output() || consumer.input_spec().has_value();
  });
  it->node->update(std::move(change), fixed);
}

CheckpointMetrics Pipeline::checkpoint_metrics() const {
  return impl_->checkpoints ? impl_->checkpoints->metrics() : CheckpointMetrics{};
}

void Pipeline::Impl::launch() {
  if (started)
    throw PipelineError(
        error_message("start", "the pipeline was already started (a Pipeline runs once)", "", ""));
  validate_and_trace();
  start_trace();  // its file made first: a path that cannot be written fails the start alone
  // Bound before anything runs, so that a port in use fails the start alone.
  if (options.metrics_port != 0) serve_metrics();
  started = true;
  start_checkpoints();
  {
    std::lock_guard lock(rate_mutex);
    rate_samples.assign(1,
                        RateSample{Clock::now(), std::vector<std::pair<uint64_t, uint64_t>>(slots.size())});
  }
  // Served from here, while the stages compile too.
  if (metrics_server) metrics_server->start();
  build_graph();
  for (auto& start_source : starters) start_source();
  start_run_log();
}

void Pipeline::Impl::drain() {
  graph->wait_for_all();
  // What nodes still hold (a partial window) goes on now that no more input comes.
  for (int i : topological_order()) {
    {
      std::lock_guard lock(mutex);
      if (stopping) break;
    }
    Slot& s = slot(i);
    if (s.context && s.node->drained(*s.context)) graph->wait_for_all();
  }
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
  if (!m.started) throw PipelineError(error_message("wait", "the pipeline was not started", "", ""));
  if (m.waiter.joinable()) m.waiter.join();
  if (!m.drained) m.drain();
  PipelineResult result = m.collect();
  result.metrics = metrics();
  m.checkpoints->finish();
  result.checkpoints = m.checkpoints->metrics();
  // Joined in the destructor: the server's thread ends meanwhile.
  if (m.metrics_server) m.metrics_server->close();
  // The log's last snapshot has every message counted; a log that failed
  // is why the run was cancelled, so it is what is thrown.
  m.stop_run_log(/*last=*/true);
  m.write_trace();
  if (m.run_log_failure) std::rethrow_exception(m.run_log_failure);
  if (!m.first_error.empty() && (m.fatal || m.options.on_error == ErrorPolicy::Stop))
    throw PipelineError(m.first_error, m.first_cause);
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
  for (Slot& s : slots) s.node->stop();
  for (auto& let_go : holds) let_go();
  if (graph) graph->cancel();
}

void Pipeline::Impl::report_error(int node, uint64_t seq, const std::string& what, std::exception_ptr cause) {
  std::string message = fmt::format("{} failed on message {}: {}", describe(node), seq, what);
  logger().warn("{}", message);
  bool stop = false;
  {
    std::lock_guard lock(mutex);
    if (first_error.empty()) {
      first_error = message;
      first_cause = std::move(cause);
    }
    if (options.on_error == ErrorPolicy::Stop && !stopping) stopping = stop = true;
  }
  if (stop) stop_sources();
}

void Pipeline::Impl::abort(int node, const std::string& what) {
  std::string message = fmt::format("{} cannot go on: {}", describe(node), what);
  logger().error("{}", message);
  bool stop = false;
  {
    std::lock_guard lock(mutex);
    if (!fatal) {
      first_error = std::move(message);
      first_cause = nullptr;
      fatal = true;
    }
    if (!stopping) stopping = stop = true;
  }
  if (stop) stop_sources();
}

std::vector<NodeMetrics> Pipeline::metrics() const {
  std::vector<NodeMetrics> out;
  Impl& impl = *impl_;
  for (const Impl::Slot& s : impl.slots) {
    const NodeCounters& c = s.node->counters();
    NodeMetrics m;
    m.name = s.node->name();
    m.kind = s.node->kind();
    m.messages_in = c.messages_in.load();
    m.messages_out = c.messages_out.load();
    m.bytes_in = c.bytes_in.load();
    m.bytes_out = c.bytes_out.load();
    m.errors = c.errors.load();
    m.skipped = c.skipped.load();
    m.busy_seconds = static_cast<double>(c.busy_ns.load()) / 1e9;
    // Waiting: what the slowest producer has sent that this node has not taken.
    uint64_t arrived = UINT64_MAX;
    for (int p : s.inputs) arrived = std::min(arrived, impl.slot(p).node->counters().messages_out.load());
    m.queue_depth =
        s.inputs.empty() ? 0 : static_cast<int64_t>(arrived) - static_cast<int64_t>(m.messages_in);
    if (m.queue_depth < 0) m.queue_depth = 0;
    m.latency_p50_us = c.latency.percentile(0.5);
    m.latency_p99_us = c.latency.percentile(0.99);
    LatencyHistogram::Cumulative latency = c.latency.cumulative();
    m.latency_buckets = std::move(latency.buckets);
    m.latency_count = latency.count;
    m.latency_sum_s = latency.sum_s;
    s.node->add_metrics(m);
    out.push_back(std::move(m));
  }
  impl.add_rates(out);
  return out;
}

void Pipeline::Impl::add_rates(std::vector<NodeMetrics>& metrics) {
  constexpr auto kWindow = std::chrono::seconds(10);
  constexpr auto kEvery = std::chrono::milliseconds(100);  // bounds the samples kept
  RateSample now{Clock::now(), {}};
  for (const NodeMetrics& m : metrics) now.out.emplace_back(m.messages_out, m.bytes_out);
  std::lock_guard lock(rate_mutex);
  if (rate_samples.empty() || now.at - rate_samples.back().at >= kEvery) rate_samples.push_back(now);
  // The newest sample at least a window old stays: the window starts there.
  while (rate_samples.size() > 1 && rate_samples[1].at <= now.at - kWindow) rate_samples.pop_front();
  const RateSample& from = rate_samples.front();
  const double span = std::chrono::duration<double>(now.at - from.at).count();
  if (span <= 0 || from.out.size() != metrics.size()) return;
  for (size_t i = 0; i < metrics.size(); ++i) {
    metrics[i].rate_window_s = span;
    metrics[i].messages_out_per_s = static_cast<double>(now.out[i].first - from.out[i].first) / span;
    metrics[i].bytes_out_per_s = static_cast<double>(now.out[i].second - from.out[i].second) / span;
  }
}

std::string Pipeline::metrics_json() const { return sluice::metrics_json(metrics()); }

std::string Pipeline::metrics_prometheus() const {
  const Impl& m = *impl_;
  std::optional<CheckpointMetrics> checkpoints;
  if (m.checkpoints && m.checkpoints->storing()) checkpoints = m.checkpoints->metrics();
  std::string name = !m.options.name.empty()                ? m.options.name
                     : !m.options.partition.process.empty() ? m.options.partition.process
                                                            : "pipeline";
  return sluice::metrics_prometheus(metrics(), name, checkpoints);
}

int Pipeline::metrics_port() const { return impl_->metrics_port; }

void Pipeline::Impl::serve_metrics() {
  if (options.metrics_port < -1 || options.metrics_port > 65535)
    throw PipelineError(error_message("pipeline", "metrics_port",
                                      "0 (off), -1 (any free port) or a port up to 65535",
                                      options.metrics_port));
  Pipeline* self = owner;
  metrics_server = std::make_unique<MetricsServer>(
      options.metrics_address, options.metrics_port,
      MetricsServer::Pages{.prometheus = [self] { return self->metrics_prometheus(); },
                           .json = [self] { return self->metrics_json(); }});
  metrics_port = metrics_server->port();
}

PipelineResult Pipeline::Impl::collect() {
  PipelineResult r;
  for (const Slot& s : slots) {
    std::optional<Tensors> acc = s.node->accumulator();
    if (!acc) continue;
    try {
      for (const Tensor& t : *acc) t.wait();
      r.accumulators[s.node->name()] = *acc;
    } catch (const std::exception& e) {
      if (first_error.empty())
        first_error = describe(static_cast<int>(&s - slots.data())) + ": its accumulator failed: " + e.what();
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
  // Every end of stream goes out before any sink waits for its reader: a
  // reader in another process may hold one stream's messages until
  // another ends (a join by time).
  std::exception_ptr failed;
  for (Slot& s : slots) {
    try {
      s.node->end_stream();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  for (Slot& s : slots) s.node->finish();
  if (failed) std::rethrow_exception(failed);
  end_credits();
  r.cancelled = cancelled;
  return r;
}

}  // namespace sluice
