// The pipeline of the sensor monitor, wired in one process.

#include <chrono>
#include <string>

#include "samples/sensor_monitor/sensor_monitor.h"

namespace sluice::sensor_monitor {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Device device_or_host(std::string_view platform) {
  for (const std::string& p : platforms())
    if (p == platform) return client(p).default_device();
  return host();
}

NodeId add_compute_stages(Pipeline& p, NodeId from, const Config& c) {
  // Each stage's accumulator lives on its device and is updated in place.
  NodeId spectrum = p.stage("spectrum", spectrum_function(c), {.acc = spectrum_acc(c), .device = c.device});
  NodeId detector = p.stage("detector", detector_function(c), {.acc = detector_acc(c), .device = c.device});
  p.connect(from, spectrum);
  p.connect(spectrum, detector);
  return detector;
}

PipelineOptions pipeline_options(const Config& c) { return {.capacity = c.chunks_in_flight}; }

Summary run_in_process(const Config& c, std::ostream& out, Progress progress) {
  Pipeline p(pipeline_options(c));
  NodeId source = p.source("vibration", vibration(c));
  NodeId detector = add_compute_stages(p, source, c);
  auto monitor = std::make_shared<Monitor>(c, out, progress);
  p.connect(detector, p.sink("monitor", monitor));
  p.run();
  return monitor->summary();
}

}  // namespace sluice::sensor_monitor
