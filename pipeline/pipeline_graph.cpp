// The oneTBB flow graph of a pipeline: each node makes its own part
// (PipelineNode::join); the pipeline joins several inputs by sequence number,
// restores order where a node needs it, and makes the edges. oneTBB copies
// node bodies, so every body holds only pointers to state owned by the
// Pipeline.

#include <algorithm>
#include <tuple>

#include <sluice/base/detail/log.h>
#include <sluice/pipeline/detail/pipeline_impl.h>

namespace sluice {

namespace flow = tbb::flow;

// What a node is offered by the pipeline it runs in (node.h).
class RunContext : public NodeContext {
 public:
  RunContext(Pipeline::Impl& impl, int index) : impl_(impl), index_(index) {}

  flow::graph& graph() override { return *impl_.graph; }
  void fail(uint64_t seq, const std::string& what, std::exception_ptr cause) override {
    impl_.slot(index_).node->counters().errors.fetch_add(1, std::memory_order_relaxed);
    impl_.report_error(index_, seq + seq_offset(), what, std::move(cause));
  }
  void abort(const std::string& what) override { impl_.abort(index_, what); }
  bool stopping() const override {
    std::lock_guard lock(impl_.mutex);
    return impl_.stopping;
  }
  void at_start(std::function<void()> fn) override { impl_.starters.push_back(std::move(fn)); }
  std::function<void()> hold_open() override {
    flow::graph& g = *impl_.graph;
    g.reserve_wait();
    auto held = std::make_shared<std::atomic<bool>>(true);
    std::function<void()> let_go = [held, &g] {
      if (held->exchange(false)) g.release_wait();
    };
    impl_.holds.push_back(let_go);
    return let_go;
  }
  size_t capacity() const override { return impl_.options.capacity; }
  uint64_t seq_offset() const override { return impl_.slot(index_).seq_offset; }
  OutputMemory output_memory() const override { return impl_.slot(index_).output_memory; }

  std::shared_ptr<Credit> credit() override {
    auto c = std::make_shared<Credit>();
    impl_.credits.push_back(c);
    return c;
  }
  Numbered number(std::optional<PushSource::ForwardedBarrier> forwarded) override {
    CheckpointCoordinator::Emitted e =
        impl_.checkpoints->emit(static_cast<size_t>(index_), std::move(forwarded));
    return {e.seq, e.barrier};
  }
  void ended(uint64_t seq) override {
    impl_.checkpoints->ended(static_cast<size_t>(index_), seq);
    impl_.source_ended(index_, seq);
  }
  void update(const std::string& stage, StageUpdate change) override {
    impl_.update(stage, std::move(change));
  }

  bool storing() const override { return impl_.checkpoints->storing(); }
  void reached(int64_t number, Tensors snapshot, std::string state) override {
    if (impl_.trace) impl_.trace->barrier(impl_.lanes[static_cast<size_t>(index_)], number);
    impl_.checkpoints->reached(number, static_cast<size_t>(index_), std::move(snapshot), std::move(state));
  }

 protected:
  void keep(std::shared_ptr<void> thing) override { impl_.graph_nodes.push_back(std::move(thing)); }

 private:
  Pipeline::Impl& impl_;
  int index_;
};

namespace {

template <typename T>
T* own(std::vector<std::shared_ptr<void>>& owned, std::shared_ptr<T> node) {
  owned.push_back(node);
  return node.get();
}

// Fan-in: a tag-matching join on the sequence number, then one message with
// the inputs' tensors in connect order.
template <size_t... I>
std::pair<std::vector<flow::receiver<Envelope>*>, flow::sender<Envelope>*> make_join(
    flow::graph& g, std::vector<std::shared_ptr<void>>& owned, std::index_sequence<I...>) {
  using Tuple = std::tuple<decltype((void)I, Envelope())...>;
  auto tag = [](const Envelope& m) -> flow::tag_value { return m.seq; };
  auto* join = own(owned, std::make_shared<flow::join_node<Tuple, flow::tag_matching>>(g, ((void)I, tag)...));
  auto* merge = own(owned, std::make_shared<flow::function_node<Tuple, Envelope>>(
                               g, flow::unlimited, [](const Tuple& parts) {
                                 Envelope out;
                                 out.seq = std::get<0>(parts).seq;
                                 out.born = std::get<0>(parts).born;
                                 out.barrier = std::get<0>(parts).barrier;
                                 std::vector<std::shared_ptr<void>> credits;
                                 std::optional<Tags> tags;  // made only when a second input has any
                                 (
                                     [&](const Envelope& m) {
                                       out.skipped = out.skipped || m.skipped;
                                       out.born = std::min(out.born, m.born);
                                       out.tensors.insert(out.tensors.end(), m.tensors.begin(), m.tensors.end());
                                       credits.push_back(m.credit);
                                       if (!m.tags) return;
                                       if (!out.tags && !tags) {
                                         out.tags = m.tags;
                                         return;
                                       }
                                       if (!tags) tags = *out.tags;
                                       for (const Tag& t : m.tags->all()) {
                                         if (tags->find(t.key, t.offset)) continue;
                                         if (tags->size() == kMaxTags) {
                                           logger().warn(
                                               "joined message {}: its inputs hold over {} tags; '{}' at "
                                               "{} and those after it are left out",
                                               out.seq, kMaxTags, t.key, t.offset);
                                           break;
                                         }
                                         tags->set(t.key, t.value, t.offset);
                                       }
                                     }(std::get<I>(parts)),
                                     ...);
                                 if (out.skipped) out.tensors.clear();
                                 // The joined message holds every input's credit, and so their tags.
                                 out.credit = std::make_shared<std::vector<std::shared_ptr<void>>>(std::move(credits));
                                 if (tags) attach_tags(out, std::move(*tags));
                                 return out;
                               }));
  flow::make_edge(*join, *merge);
  return {{&flow::input_port<I>(*join)...}, merge};
}

std::pair<std::vector<flow::receiver<Envelope>*>, flow::sender<Envelope>*> make_join(
    flow::graph& g, std::vector<std::shared_ptr<void>>& owned, size_t inputs) {
  switch (inputs) {
    case 2: return make_join(g, owned, std::make_index_sequence<2>{});
    case 3: return make_join(g, owned, std::make_index_sequence<3>{});
    default: return make_join(g, owned, std::make_index_sequence<4>{});
  }
}

}  // namespace

void Pipeline::Impl::watch_ends() {
  ends_watched.assign(slots.size(), {});
  for (size_t i = 0; i < slots.size(); ++i) {
    const PipelineNode& n = *slots[i].node;
    if (!n.watches_input_ends() || (!n.separate_inputs() && slots[i].inputs.size() != 1)) continue;
    for (size_t k = 0; k < slots[i].inputs.size(); ++k) {
      // Up the input's one producer after another, while each keeps its
      // input's numbers, to the source that numbered them.
      int at = slots[i].inputs[k];
      while (slot(at).inputs.size() == 1 && !slot(at).node->numbers_its_outputs()) at = slot(at).inputs[0];
      if (slot(at).inputs.empty() && !slot(at).node->numbers_its_outputs())
        ends_watched[static_cast<size_t>(at)].emplace_back(static_cast<int>(i), k);
    }
  }
}

void Pipeline::Impl::source_ended(int source, uint64_t messages) {
  for (const auto& [node, input] : ends_watched[static_cast<size_t>(source)])
    slot(node).node->input_ended(input, messages);
}

void Pipeline::Impl::build_graph() {
  watch_ends();
  // Made inside the arena, the graph attaches to it and runs its work there.
  arena.execute([this] { graph = std::make_unique<flow::graph>(); });
  flow::graph& g = *graph;
  std::vector<flow::sender<Envelope>*> exits(slots.size(), nullptr);
  std::vector<std::vector<flow::receiver<Envelope>*>> entries(slots.size());

  for (size_t i = 0; i < slots.size(); ++i) {
    Slot& s = slots[i];
    s.context = std::make_unique<RunContext>(*this, static_cast<int>(i));
    NodePorts ports = s.node->join(*s.context);
    exits[i] = ports.output;
    if (s.inputs.empty()) continue;
    if (s.node->separate_inputs()) {
      if (ports.inputs.size() != s.inputs.size())
        throw PipelineError(error_message(describe(static_cast<int>(i)), "join() gave its receivers",
                                          fmt::format("one per input, {}", s.inputs.size()),
                                          fmt::format("{}", ports.inputs.size())));
      // Each input in its own order, where it needs one.
      for (size_t k = 0; k < s.inputs.size(); ++k) {
        flow::receiver<Envelope>* entry = ports.inputs[k];
        if (s.node->needs_order() && slot(s.inputs[k]).keeps_order) {
          auto* order =
              own(graph_nodes, std::make_shared<flow::sequencer_node<Envelope>>(
                                   g, [](const Envelope& m) { return static_cast<size_t>(m.seq); }));
          flow::make_edge(*order, *entry);
          entry = order;
        }
        entries[i].push_back(entry);
      }
      continue;
    }
    if (!ports.input)
      throw PipelineError(
          error_message(describe(static_cast<int>(i)), "join() gave no input to connect to", "", ""));
    entries[i] = {ports.input};
    // oneTBB keeps no order between nodes, not even after a serial one (it
    // starts the next message before passing this one on), so order is
    // restored where it is needed: before a stage's accumulator and a sink.
    bool inputs_ordered =
        std::all_of(s.inputs.begin(), s.inputs.end(), [this](int p) { return slot(p).keeps_order; });
    if (s.node->needs_order() && inputs_ordered) {
      auto* order = own(graph_nodes, std::make_shared<flow::sequencer_node<Envelope>>(
                                         g, [](const Envelope& m) { return static_cast<size_t>(m.seq); }));
      flow::make_edge(*order, *entries[i][0]);
      entries[i] = {order};
    }
    // Several inputs: join them first.
    if (s.inputs.size() > 1) {
      auto [join_ports, merged] = make_join(g, graph_nodes, s.inputs.size());
      flow::make_edge(*merged, *entries[i][0]);
      entries[i] = join_ports;
    }
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    const auto& inputs = slots[i].inputs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      flow::sender<Envelope>* from = exits[static_cast<size_t>(inputs[k])];
      if (!from)
        throw PipelineError(
            error_message(describe(inputs[k]), "join() gave no output to connect from", "", ""));
      flow::make_edge(*from, *entries[i][k]);
    }
  }
}

}  // namespace sluice
