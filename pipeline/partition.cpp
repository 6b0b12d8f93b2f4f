// A partitioned pipeline (PartitionOptions): this process keeps its own
// nodes, meets the other processes, and each edge to or from another
// process becomes a reliable ZeroMQ channel: a sink in the producer's
// process, a source in the consumer's, at the endpoint the placement gives
// the consumer for that edge.

#include <filesystem>
#include <map>
#include <set>

#include <sluice/base/detail/error_format.h>
#include <sluice/base/detail/log.h>
#include <sluice/pipeline/detail/meeting.h>
#include <sluice/pipeline/detail/node_kinds.h>
#include <sluice/pipeline/detail/pipeline_impl.h>
#include <sluice/pipeline/zmq_nodes.h>

namespace sluice {

// The whole pipeline as every process sees it, one node per line: what
// the processes compare when they meet.
std::string Pipeline::Impl::description() const {
  std::string out;
  for (const Slot& s : slots) {
    out += std::string(s.node->kind()) + " '" + s.node->name() + "' in '" + s.process + "' <-";
    for (int p : s.inputs) out += " '" + slots[static_cast<size_t>(p)].node->name() + "'";
    std::optional<std::vector<Spec>> spec = s.node->output_spec();
    out += " gives " + (spec ? specs_str(*spec) : std::string("nothing")) + "\n";
  }
  return out;
}

void Pipeline::Impl::partition() {
  const PartitionOptions& po = options.partition;
  if (po.process.empty() || !po.placement)
    throw PipelineError(error_message("pipeline", "partition", "this process's name and a placement",
                                      po.process.empty() ? "no process name" : "no placement"));
  const Placement& place = *po.placement;
  const std::string& me = place.at(po.process).name;
  std::set<std::string> used;
  for (size_t i = 0; i < slots.size(); ++i) {
    const std::string& p = slots[i].process;
    if (p.empty())
      throw PipelineError(error_message(describe(static_cast<int>(i)), "",
                                        "the process that runs it (a partitioned pipeline places every node)",
                                        "none"));
    if (!place.has(p))
      throw PipelineError(error_message(
          describe(static_cast<int>(i)),
          fmt::format("runs in process '{}', which the placement from {} does not have", p, place.source), "",
          ""));
    used.insert(p);
  }
  for (const ProcessPlace& p : place.processes)
    if (!used.contains(p.name))
      throw PipelineError(
          error_message(fmt::format("process '{}' of the placement from {}", p.name, place.source), "",
                        "at least one node to run", "none"));
  const ProcessPlace& here = place.at(me);
  // A directory for the edges' socket files; an abstract name (@...) is in no file system.
  if (!here.ipc_dir.empty() && here.ipc_dir[0] != '@') std::filesystem::create_directories(here.ipc_dir);
  meeting = std::make_unique<Meeting>(place, me, description(), po.meet_timeout);

  // Every node's name and output, read before this process's nodes move out of `all`.
  std::vector<std::string> names;
  std::vector<std::vector<Spec>> outputs;
  for (const Slot& s : slots) {
    names.push_back(s.node->name());
    outputs.push_back(s.node->output_spec().value_or(std::vector<Spec>{}));
  }
  std::vector<Slot> all = std::move(slots);
  slots.clear();
  std::vector<int> at(all.size(), -1);  // where each node of this process is now
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].process == me) {
      at[i] = static_cast<int>(slots.size());
      slots.push_back(Slot{.node = std::move(all[i].node), .process = me, .flow_origin = all[i].flow_origin});
    }
  auto link = [this](int from, int to) {
    slot(from).outputs.push_back(to);
    slot(to).inputs.push_back(from);
  };
  auto add_slot = [this](std::unique_ptr<PipelineNode> node) {
    slots.push_back(Slot{.node = std::move(node), .process = options.partition.process});
    return static_cast<int>(slots.size()) - 1;
  };
  // Edges in one order in every process, so that each edge's endpoint (the
  // consumer's k-th) is the same on both sides.
  std::map<std::string, int> received;
  for (size_t b = 0; b < all.size(); ++b) {
    for (int a : all[b].inputs) {
      const std::string& from = all[static_cast<size_t>(a)].process;
      const std::string& to = all[b].process;
      if (from == to) {
        if (from == me) link(at[static_cast<size_t>(a)], at[b]);
        continue;
      }
      const int k = ++received[to];  // 0 is the meeting's
      const std::string edge = names[static_cast<size_t>(a)] + "->" + names[b];
      if (from == me) {
        ZmqSinkOptions o;
        o.channel.credit_messages = options.capacity;
        o.channel.peer_timeout = po.peer_timeout;
        o.finish_timeout = po.peer_timeout;
        if (place.curve())
          o.channel.curve = {.secret = here.curve_secret, .server = place.at(to).curve_public};
        const std::string endpoint = place.connect_endpoint(to, k, edge);
        // ipc is this host: the sink asks for the producer's outputs in
        // shared memory (Sink::input_memory), which the channel then shares.
        int sink = add_slot(sink_node(edge, sinks::zmq(endpoint, o)));
        slots[static_cast<size_t>(sink)].edge = true;
        slots[static_cast<size_t>(sink)].flow_origin = all[static_cast<size_t>(a)].flow_origin;
        link(at[static_cast<size_t>(a)], sink);
      }
      if (to == me) {
        ZmqSourceOptions o;
        // Twice the capacity: a receiver copies a message whose tensors it
        // would hold past half its credit (leases) out of the sender's
        // memory, and this process's pipeline holds up to `capacity` of them.
        // The sender still sends at most its own credit, `capacity`.
        o.channel.credit_messages = 2 * options.capacity;
        o.channel.peer_timeout = po.peer_timeout;
        // A producer restarted from a checkpoint goes on with the stream.
        o.channel.continue_streams = true;
        if (place.curve())
          o.channel.curve = {
              .secret = here.curve_secret,
              .allow = std::filesystem::path(place.at(from).curve_public).parent_path().string()};
        auto source = sources::zmq(place.bind_endpoint(to, k, edge), outputs[static_cast<size_t>(a)], o);
        int node = add_slot(source->make_node(edge, source));
        slots[static_cast<size_t>(node)].edge = true;
        slots[static_cast<size_t>(node)].flow_origin = all[static_cast<size_t>(a)].flow_origin;
        link(node, at[b]);
      }
    }
  }
  logger().info("process '{}' of {}: {} nodes here, with the edges to other processes", me, place.source,
                slots.size());
}

}  // namespace sluice
