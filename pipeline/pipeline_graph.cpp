// The oneTBB flow graph of a pipeline: which oneTBB node each pipeline node
// becomes, and what their bodies do. oneTBB copies node bodies, so every
// body holds only pointers to state owned by the Pipeline.

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

double micros_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
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
    c.messages_out.fetch_add(1, std::memory_order_relaxed);
    c.bytes_out.fetch_add(static_cast<uint64_t>(bytes_of(m.tensors)), std::memory_order_relaxed);
    c.busy_ns.fetch_add(static_cast<uint64_t>(std::chrono::nanoseconds(Clock::now() - start).count()),
                        std::memory_order_relaxed);
    c.latency.record(micros_since(m.born));
  }
};

std::shared_ptr<void> take_credit(const std::shared_ptr<Credit>& credit) {
  return std::shared_ptr<void>(nullptr, [credit](void*) {
    if (credit->live.load(std::memory_order_acquire)) credit->release();
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

void Pipeline::Impl::build_graph() {
  graph = std::make_unique<flow::graph>();
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
          auto slots = std::make_shared<std::counting_semaphore<>>(static_cast<std::ptrdiff_t>(options.capacity));
          auto seq = std::make_shared<std::atomic<uint64_t>>(0);
          credit->release = [slots] { slots->release(); };
          ++open_push_sources;
          PushSource::Wiring w;
          w.take_credit = [slots, self] {
            while (!slots->try_acquire_for(std::chrono::milliseconds(50))) {
              std::lock_guard lock(self->mutex);
              if (self->stopping) return false;
            }
            return true;
          };
          w.deliver = [entry, n, credit, seq](Tensors t) {
            Message m{seq->fetch_add(1), std::move(t), false, take_credit(credit), Clock::now()};
            Visit v(n->counters, m);
            v.leave(m);
            entry->try_put(m);
          };
          w.closed = [self] {
            std::lock_guard lock(self->mutex);
            --self->open_push_sources;
            self->changed.notify_all();
          };
          starters.push_back([push, w = std::move(w)]() mutable { push->wire(std::move(w)); });
          exits[i] = entry;
          break;
        }
        auto* limiter = own(graph_nodes, std::make_shared<flow::limiter_node<Message>>(g, options.capacity));
        credit->release = [limiter] { limiter->decrementer().try_put(flow::continue_msg()); };
        auto seq = std::make_shared<uint64_t>(0);
        auto* input = own(graph_nodes, std::make_shared<flow::input_node<Message>>(
                                           g, [n, credit, seq, self](tbb::flow_control& fc) -> Message {
                                             {
                                               std::lock_guard lock(self->mutex);
                                               if (self->stopping) {
                                                 fc.stop();
                                                 return {};
                                               }
                                             }
                                             std::optional<Tensors> next;
                                             try {
                                               next = n->source->next();
                                             } catch (const std::exception& e) {
                                               n->counters.errors.fetch_add(1);
                                               self->report_error(*n, *seq, e.what());
                                               fc.stop();
                                               return {};
                                             }
                                             if (!next) {
                                               fc.stop();
                                               return {};
                                             }
                                             Message m{(*seq)++, std::move(*next), false, take_credit(credit),
                                                       Clock::now()};
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
        auto* body = own(graph_nodes, std::make_shared<flow::function_node<Message, Message>>(
                                          g, concurrency, [n, self, stateful](Message m) -> Message {
                                            Visit v(n->counters, m);
                                            if (!m.skipped) {
                                              try {
                                                Tensors placed = n->step->place(m.tensors);
                                                Tensors local;
                                                Tensors& acc = stateful ? n->acc : local;
                                                Tensors out = n->step->run(placed, acc);
                                                // Wait here so a failure is this stage's, on this message.
                                                for (const Tensor& t : out) t.wait();
                                                for (const Tensor& t : acc) t.wait();
                                                m.tensors = std::move(out);
                                              } catch (const std::exception& e) {
                                                n->counters.errors.fetch_add(1, std::memory_order_relaxed);
                                                self->report_error(*n, m.seq, e.what());
                                                m.skipped = true;
                                                m.tensors.clear();
                                              }
                                            }
                                            v.leave(m);
                                            return m;
                                          }));
        flow::sender<Message>* exit = body;
        if (concurrency > 1 && n->options.ordered) {
          auto* order = own(graph_nodes, std::make_shared<flow::sequencer_node<Message>>(
                                             g, [](const Message& m) { return static_cast<size_t>(m.seq); }));
          flow::make_edge(*body, *order);
          exit = order;
        }
        exits[i] = exit;
        entries[i] = {body};
        break;
      }
      case NodeRec::Kind::Sink: {
        auto* body = own(graph_nodes, std::make_shared<flow::function_node<Message, flow::continue_msg>>(
                                          g, flow::serial, [n, self](const Message& m) {
                                            Visit v(n->counters, m);
                                            if (!m.skipped) {
                                              try {
                                                n->sink->consume(m.seq, m.tensors);
                                              } catch (const std::exception& e) {
                                                n->counters.errors.fetch_add(1, std::memory_order_relaxed);
                                                self->report_error(*n, m.seq, e.what());
                                              }
                                            }
                                            v.leave(m);
                                            return flow::continue_msg();
                                          }));
        entries[i] = {body};
        break;
      }
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
