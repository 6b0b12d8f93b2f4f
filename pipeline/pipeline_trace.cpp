// A traced run (PipelineOptions::trace; pipeline/trace.h): each node's lane
// made as the run starts, the file written as it ends.

#include <sluice/pipeline/detail/pipeline_impl.h>

namespace sluice {

void Pipeline::Impl::start_trace() {
  if (options.trace.empty()) return;
  trace = std::make_unique<TraceRecorder>(options.trace, options.partition.process, options.trace_max_events);
  lanes.clear();
  lanes.reserve(slots.size());  // the counters point into it: never moved
  for (Slot& s : slots) {
    // A message's flow starts at its source and ends at its sinks; a
    // channel to another process of this pipeline carries it on there.
    FlowStep flow = FlowStep::Step;
    if (!s.edge && s.inputs.empty()) flow = FlowStep::Start;
    if (!s.edge && s.outputs.empty() && !s.inputs.empty()) flow = FlowStep::End;
    lanes.push_back(trace->lane(s.node->name(), s.node->kind(), flow, s.flow_origin, s.seq_offset));
    s.node->counters().trace = &lanes.back();
  }
}

void Pipeline::Impl::write_trace() {
  if (!trace) return;
  for (Slot& s : slots) s.node->counters().trace = nullptr;
  trace->write();
}

}  // namespace sluice
