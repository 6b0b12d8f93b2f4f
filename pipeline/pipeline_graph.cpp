// The oneTBB flow graph of a pipeline: which oneTBB node each pipeline node
// becomes, and what their bodies do. oneTBB copies node bodies, so every
// body holds only pointers to state owned by the Pipeline.

#include <algorithm>
#include <semaphore>
#include <tuple>

#include "pipeline/pipeline_impl.h"

namespace sluice {
namespace {

namespace flow = tbb::flow;

int64_t bytes_of(const Tensors& t) {
  int64_t b = 0;
  for (const Tensor& x : t) b += x.spec().bytes();
  return b;
}

// Counts a message into and out of a node, and its time there.
struct Visit {
  NodeCounters& c;
  Clock::time_point start = Clock::now();
  Visit(NodeCounters& counters, const Message& m) : c(counters) {
    c.messages_in.fetch_add(1, std::memory_order_relaxed);
    c.bytes_in.fetch_add(static_cast<uint64_t>(bytes_of(m.tensors)), std::memory_order_relaxed);
    if (m.skipped) c.skipped.fetch_add(1, std::memory_order_relaxed);
  }
  void leave(const Message& m) {
    const Clock::time_point now = Clock::now();
    c.messages_out.fetch_add(1, std::memory_order_relaxed);
    c.bytes_out.fetch_add(static_cast<uint64_t>(bytes_of(m.tensors)), std::memory_order_relaxed);
    c.busy_ns.fetch_add(static_cast<uint64_t>(std::chrono::nanoseconds(now - start).count()),
                        std::memory_order_relaxed);
    c.latency.record(std::chrono::duration<double, std::micro>(now - m.born).count());
  }
};

// What a message holds while it is in the pipeline: its source's credit,
// given back (and the source told, when it asked) as the last copy goes.
std::shared_ptr<void> take_credit(const std::shared_ptr<Credit>& credit, OnDone done = {}) {
  return std::shared_ptr<void>(nullptr, [credit, done = std::move(done)](void*) {
    if (credit->live.load(std::memory_order_acquire)) credit->release();
    if (done) done(credit->finishing.load(std::memory_order_acquire));
  });
}

template <typename T>
T* own(std::vector<std::shared_ptr<void>>& owned, std::shared_ptr<T> node) {
  owned.push_back(node);
  return node.get();
}

// Fan-in: a tag-matching join on the sequence number, then one message with
// the inputs' tensors in connect order.
template <size_t... I>
std::pair<std::vector<flow::receiver<Message>*>, flow::sender<Message>*> make_join(
    flow::graph& g, std::vector<std::shared_ptr<void>>& owned, std::index_sequence<I...>) {
  using Tuple = std::tuple<decltype((void)I, Message())...>;
  auto tag = [](const Message& m) -> flow::tag_value { return m.seq; };
  auto* join = own(owned, std::make_shared<flow::join_node<Tuple, flow::tag_matching>>(g, ((void)I, tag)...));
  auto* merge = own(owned, std::make_shared<flow::function_node<Tuple, Message>>(
                               g, flow::unlimited, [](const Tuple& parts) {
                                 Message out;
                                 out.seq = std::get<0>(parts).seq;
                                 out.born = std::get<0>(parts).born;
                                 out.barrier = std::get<0>(parts).barrier;
                                 std::vector<std::shared_ptr<void>> credits;
                                 (
                                     [&](const Message& m) {
                                       out.skipped = out.skipped || m.skipped;
                                       out.born = std::min(out.born, m.born);
                                       out.tensors.insert(out.tensors.end(), m.tensors.begin(), m.tensors.end());
                                       credits.push_back(m.credit);
                                     }(std::get<I>(parts)),
                                     ...);
                                 if (out.skipped) out.tensors.clear();
                                 // The joined message holds every input's credit.
                                 out.credit = std::make_shared<std::vector<std::shared_ptr<void>>>(std::move(credits));
                                 return out;
                               }));
  flow::make_edge(*join, *merge);
  return {{&flow::input_port<I>(*join)...}, merge};
}

std::pair<std::vector<flow::receiver<Message>*>, flow::sender<Message>*> make_join(
    flow::graph& g, std::vector<std::shared_ptr<void>>& owned, size_t inputs) {
  switch (inputs) {
    case 2: return make_join(g, owned, std::make_index_sequence<2>{});
    case 3: return make_join(g, owned, std::make_index_sequence<3>{});
    default: return make_join(g, owned, std::make_index_sequence<4>{});
  }
}

}  // namespace

Tensors host_copies(const Tensors& acc) {
  Tensors out;
  for (const Tensor& t : acc)
    out.push_back(t.device() == host() ? tensor_from_bytes(t.spec(), t.host_data(), host()) : t.to_host());
  return out;
}

void Pipeline::Impl::build_graph() {
  // Made inside the arena, the graph attaches to it and runs its work there.
  arena.execute([this] { graph = std::make_unique<flow::graph>(); });
  flow::graph& g = *graph;
  exits.assign(nodes.size(), nullptr);
  entries.assign(nodes.size(), {});
  Impl* self = this;

  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeRec* n = nodes[i].get();
    auto credit = std::make_shared<Credit>();
    switch (n->kind) {
      case NodeRec::Kind::Source: {
        credits.push_back(credit);
        if (auto push = std::dynamic_pointer_cast<PushSource>(n->source)) {
          // Pushed from other threads straight into the graph; a semaphore of
          // `capacity` credits makes push block when the pipeline is full.
          auto* entry = own(graph_nodes, std::make_shared<flow::broadcast_node<Message>>(g));
          auto slots =
              std::make_shared<std::counting_semaphore<>>(static_cast<std::ptrdiff_t>(options.capacity));
          credit->release = [slots] { slots->release(); };
          // Until it closes, the source may still put messages into the
          // graph: wait_for_all must not return before, and the thread in it
          // keeps running the graph's work meanwhile.
          g.reserve_wait();
          auto held = std::make_shared<std::atomic<bool>>(true);
          std::function<void()> let_go = [held, &g] {
            if (held->exchange(false)) g.release_wait();
          };
          push_holds.push_back(let_go);
          PushSource::Wiring w;
          w.take_credit = [slots, self](std::chrono::milliseconds timeout) -> std::optional<bool> {
            const auto deadline = Clock::now() + timeout;
            for (;;) {
              auto step = std::chrono::milliseconds(50);
              if (timeout.count() >= 0)
                step = std::min(step, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
              if (slots->try_acquire_for(std::max(step, std::chrono::milliseconds(0)))) return true;
              {
                std::lock_guard lock(self->mutex);
                if (self->stopping) return std::nullopt;
              }
              if (timeout.count() >= 0 && Clock::now() >= deadline) return false;
            }
          };
          CheckpointCoordinator* coordinator = checkpoints.get();
          w.deliver = [entry, n, i, credit, coordinator](
                          Tensors t, OnDone done, std::optional<PushSource::ForwardedBarrier> barrier) {
            auto [seq, number] = coordinator->emit(i, std::move(barrier));
            Message m{seq, std::move(t), false, take_credit(credit, std::move(done)), Clock::now(), number};
            Visit v(n->counters, m);
            v.leave(m);
            entry->try_put(m);
          };
          w.closed = let_go;
          w.update = [self](const std::string& stage, Tensors acc) {
            self->update(stage, {.acc = std::move(acc)});
          };
          starters.push_back([push, w = std::move(w)]() mutable { push->wire(std::move(w)); });
          exits[i] = entry;
          break;
        }
        auto* limiter = own(graph_nodes, std::make_shared<flow::limiter_node<Message>>(g, options.capacity));
        credit->release = [limiter] { limiter->decrementer().try_put(flow::continue_msg()); };
        auto* input =
            own(graph_nodes, std::make_shared<flow::input_node<Message>>(
                                 g, [n, i, credit, self](tbb::flow_control& fc) -> Message {
                                   {
                                     std::lock_guard lock(self->mutex);
                                     if (self->stopping) {
                                       fc.stop();
                                       return {};
                                     }
                                   }
                                   // Numbered (and any barrier placed) before next():
                                   // a source's checkpoint state is where it stands.
                                   auto [seq, barrier] = self->checkpoints->emit(i);
                                   std::optional<Tensors> next;
                                   try {
                                     next = n->source->next();
                                   } catch (const std::exception& e) {
                                     n->counters.errors.fetch_add(1);
                                     self->report_error(*n, seq + n->seq_offset, e.what());
                                     fc.stop();
                                     return {};
                                   }
                                   if (!next) {
                                     self->checkpoints->ended(i, seq);
                                     fc.stop();
                                     return {};
                                   }
                                   Message m{seq,          std::move(*next), false, take_credit(credit),
                                             Clock::now(), barrier};
                                   Visit v(n->counters, m);
                                   v.leave(m);
                                   return m;
                                 }));
        flow::make_edge(*input, *limiter);
        starters.push_back([input] { input->activate(); });
        exits[i] = limiter;
        break;
      }
      case NodeRec::Kind::Stage: {
        bool stateful = !n->acc.empty();
        size_t concurrency = stateful ? 1 : static_cast<size_t>(n->options.concurrency);
        auto* body =
            own(graph_nodes, std::make_shared<flow::function_node<Message, Message>>(
                                 g, concurrency, [n, i, self, stateful](const Message& in) -> Message {
                                   Visit v(n->counters, in);
                                   Message out{in.seq, {}, in.skipped, in.credit, in.born, in.barrier};
                                   // The accumulator as it stands before the barrier's message.
                                   if (in.barrier && stateful)
                                     self->checkpoints->reached(
                                         in.barrier, i,
                                         self->checkpoints->storing() ? host_copies(n->acc) : Tensors{}, {});
                                   const Step& step = n->step_for(in.seq, stateful ? &n->acc : nullptr);
                                   if (!in.skipped) {
                                     try {
                                       Tensors placed = step.place(in.tensors);
                                       Tensors local;
                                       Tensors& acc = stateful ? n->acc : local;
                                       out.tensors = step.run(placed, acc);
                                       // Wait here so a failure is this stage's, on this message.
                                       for (const Tensor& t : out.tensors) t.wait();
                                       for (const Tensor& t : acc) t.wait();
                                     } catch (const std::exception& e) {
                                       n->counters.errors.fetch_add(1, std::memory_order_relaxed);
                                       self->report_error(*n, in.seq + n->seq_offset, e.what());
                                       out.skipped = true;
                                       out.tensors.clear();
                                     }
                                   }
                                   v.leave(out);
                                   return out;
                                 }));
        exits[i] = body;
        entries[i] = {body};
        break;
      }
      case NodeRec::Kind::Sink: {
        auto* body = own(graph_nodes,
                         std::make_shared<flow::function_node<Message, flow::continue_msg>>(
                             g, flow::serial, [n, i, self](const Message& m) {
                               Visit v(n->counters, m);
                               const uint64_t seq = m.seq + n->seq_offset;
                               if (m.barrier) {
                                 try {
                                   self->checkpoints->reached(m.barrier, i, {}, n->sink->prepare(m.barrier));
                                 } catch (const std::exception& e) {
                                   // Not handed in: this checkpoint never completes.
                                   n->counters.errors.fetch_add(1, std::memory_order_relaxed);
                                   self->report_error(*n, seq, std::string("prepare: ") + e.what());
                                 }
                               }
                               if (!m.skipped) {
                                 try {
                                   n->sink->consume(seq, m.tensors);
                                 } catch (const std::exception& e) {
                                   n->counters.errors.fetch_add(1, std::memory_order_relaxed);
                                   self->report_error(*n, seq, e.what());
                                 }
                               }
                               v.leave(m);
                               return flow::continue_msg();
                             }));
        entries[i] = {body};
        break;
      }
    }
    // oneTBB keeps no order between nodes, not even after a serial one (it
    // starts the next message before passing this one on), so order is
    // restored where it is needed: before a stage's accumulator and a sink.
    bool needs_order = n->kind == NodeRec::Kind::Sink || !n->acc.empty();
    bool inputs_ordered = std::all_of(n->inputs.begin(), n->inputs.end(),
                                      [this](int p) { return nodes[static_cast<size_t>(p)]->keeps_order; });
    if (needs_order && inputs_ordered) {
      auto* order = own(graph_nodes, std::make_shared<flow::sequencer_node<Message>>(
                                         g, [](const Message& m) { return static_cast<size_t>(m.seq); }));
      flow::make_edge(*order, *entries[i][0]);
      entries[i] = {order};
    }
    // Several inputs: join them first.
    if (n->inputs.size() > 1) {
      auto [ports, merged] = make_join(g, graph_nodes, n->inputs.size());
      flow::make_edge(*merged, *entries[i][0]);
      entries[i] = ports;
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& inputs = nodes[i]->inputs;
    for (size_t k = 0; k < inputs.size(); ++k)
      flow::make_edge(*exits[static_cast<size_t>(inputs[k])], *entries[i][k]);
  }
}

}  // namespace sluice
