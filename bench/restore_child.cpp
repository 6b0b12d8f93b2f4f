// The compute process of bench_checkpoint's restore_time: the sensor
// monitor's two stages fed by its vibration source, taken as a live feed
// (as the demo's compute process takes its chunks from the network: no
// replaying of chunks is timed).
//   bench_restore_child prepare DIR   runs 40 chunks, checkpointing every 10, into DIR
//   bench_restore_child restore DIR   restores from DIR and prints "first output restored"
//                                     as its first output leaves the detector, then stops

#include <iostream>

#include <sensor_monitor/sensor_monitor.h>

namespace sm = sluice::sensor_monitor;
using namespace sluice;

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string mode = argv[1], dir = argv[2];
  sm::Config c;
  c.chunks = 40;
  PipelineOptions o = sm::pipeline_options(c);
  o.checkpoint_dir = dir;
  o.checkpoint_interval.messages = 10;
  o.at_most_once = {"vibration"};
  Pipeline p(o);
  NodeId in = p.source("vibration", sm::vibration(c));  // a live feed: it does not replay
  NodeId detector = sm::add_compute_stages(p, in, c);
  bool restored = mode == "restore";
  bool said = false;
  p.connect(detector, p.sink("first", [&](const Tensors&) {
    if (!restored || said) return;
    said = true;
    std::cout << "first output restored" << std::endl;
    p.cancel();
  }));
  if (restored && p.restore().checkpoint == 0) return 1;
  p.run();
  return restored && !said ? 1 : 0;
}
