// The compute process of bench_checkpoint's restore_time: the sensor
// monitor's two stages fed by its vibration source, taken as a live feed
// (as the demo's compute process takes its chunks from the network: no
// replaying of chunks is timed).
//   bench_restore_child prepare DIR   runs 40 chunks, checkpointing every 10, into DIR
//   bench_restore_child restore DIR   restores from DIR and prints "first output restored"
//                                     as its first output leaves the detector, then stops

#include <iostream>

#include "samples/sensor_monitor/sensor_monitor.h"

namespace sm = sluice::sensor_monitor;
using namespace sluice;

// Forty chunks of vibration; it does not replay.
class Feed : public Source {
 public:
  Feed(const sm::Config& c, int n) : source_(sm::vibration(c)), left_(n) {}
  std::vector<Spec> spec() const override { return source_->spec(); }
  std::optional<Tensors> next() override { return left_-- > 0 ? source_->next() : std::nullopt; }

 private:
  std::shared_ptr<Source> source_;
  int left_;
};

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string mode = argv[1], dir = argv[2];
  sm::Config c;
  c.seconds = 1e6;
  PipelineOptions o = sm::pipeline_options(c);
  o.checkpoint_dir = dir;
  o.checkpoint_interval.messages = 10;
  o.at_most_once = {"vibration"};
  Pipeline p(o);
  NodeId in = p.source("vibration", std::make_shared<Feed>(c, 40));
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
