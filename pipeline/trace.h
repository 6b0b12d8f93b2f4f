#pragma once
// A timeline of every message (PipelineOptions::trace): the Chrome trace
// event format (JSON, as Perfetto, ui.perfetto.dev and chrome://tracing
// read), one slice per node per message on the thread that ran it, and
// flow arrows that follow each message from its source through every node
// to its sinks, across processes too (a message keeps its number along a
// partitioned pipeline's chain of processes; a flow's id is that number).
// The slices carry the flows themselves (the format's flow events v2: a
// slice's bind_id is its flow, flow_in that a flow comes into it, flow_out
// that it goes on), not an event of their own each: half the events.
// A message's wait in a node's queue, from the node before letting it go
// to this node taking it, is an async slice ("b" and "e", its id the
// node's number and the flow's) on the node's queue track: waits in one
// queue overlap, as a thread's slices may not. Waits under a microsecond
// (hand-offs to the next node on the same thread) are left out.
// Checkpoint barriers are instants on the node that passed them.
//
//   {"traceEvents": [
//     {"name":"fft queue","cat":"queue","id":"2.7","ph":"b","ts":1.49998e6,"pid":412,"tid":415},
//     {"name":"fft queue","cat":"queue","id":"2.7","ph":"e","ts":1.5e6,"pid":412,"tid":415},
//     {"name":"fft","cat":"stage","ph":"X","ts":1.5e6,"dur":84.1,"pid":412,"tid":415,"args":{"seq":7},
//      "bind_id":7,"flow_in":true,"flow_out":true}, ...],
//    "otherData": {"process":"compute","host":"a","pid":412,"clock_monotonic_ns":..,"clock_realtime_ns":..,
//                  "events":9120,"events_dropped":0}}
//
// Timestamps are the host's monotonic clock (CLOCK_MONOTONIC, which every
// process of a host shares) in microseconds; each file names its host and
// a pair of readings of the monotonic and the wall clock, by which
// merge_traces puts the files of several hosts onto one clock.
//
// Each process of a partitioned pipeline writes its own file (its
// PipelineOptions::trace); `sluice trace merge` (merge_traces) makes them
// one, as `sluice demo --trace` does. A trace is bounded: past
// trace_max_events events, the rest of the run is not recorded, and the
// file says how many were dropped.

#include <string>
#include <vector>

namespace sluice {

// One trace file's clocks, as merge_traces used them.
struct TraceFile {
  std::string path;
  std::string process;  // the partition's process; empty: a whole pipeline
  std::string host;
  // Its wall clock less its monotonic clock, less the first file's: what
  // moves it onto the first's clock. On one host, the monotonic clock is
  // one, and this is only how far the two readings of each pair were apart.
  double clock_difference_us = 0;
  double offset_us = 0;  // added to each of its timestamps in the merged trace: the difference, across hosts
};

// Writes the trace files `inputs` as one to `output`: their events, each
// file's timestamps moved onto the first file's clock when their hosts
// differ (by the wall clock's readings; on one host the monotonic clock is
// shared already, and nothing moves). PipelineError naming a file that
// cannot be read or is no sluice trace, or an output that cannot be written.
std::vector<TraceFile> merge_traces(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace sluice
