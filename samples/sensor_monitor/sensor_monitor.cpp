// The pipeline of the sensor monitor, wired in one process.

#include <chrono>
#include <string>

#include <sensor_monitor/sensor_monitor.h>

namespace sluice::sensor_monitor {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

NodeId add_compute_stages(Pipeline& p, NodeId from, const Config& c, const std::string& process) {
  // Each stage's accumulator lives on its device and is updated in place.
  NodeId spectrum = p.stage("spectrum", spectrum_function(c),
                            {.acc = spectrum_acc(c), .device = c.device, .process = process});
  NodeId detector = p.stage("detector", detector_function(c),
                            {.acc = detector_acc(c), .device = c.device, .process = process});
  p.connect(from, spectrum);
  p.connect(spectrum, detector);
  if (std::shared_ptr<RunLog> log = p.run_log())
    p.connect(spectrum, p.sink("spectrogram", spectrogram_log(c, log), {.process = process}));
  return detector;
}

PipelineOptions pipeline_options(const Config& c) {
  return {
      .capacity = c.chunks_in_flight, .metrics_port = c.metrics_port, .run_log = c.run_log, .trace = c.trace};
}

void add_sensor_monitor(Pipeline& p, const Config& c, std::shared_ptr<Sink> monitor) {
  std::shared_ptr<MachineClock> clock = machine_clock();
  NodeId source = p.source("vibration", vibration(c, clock), {.process = kProcesses[0]});
  NodeId tachometer_readings = p.source("tachometer", tachometer(c, clock), {.process = kProcesses[0]});
  NodeId detector = add_compute_stages(p, source, c, kProcesses[1]);
  // The scores set the rows. The tachometer makes a message in
  // microseconds and runs ahead of them, so windows seldom wait for their
  // readings; where they do, the lateness (of the machine's time) bounds it.
  NodeId joined = p.zip_by_time("joined",
                                {.tolerance = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::duration<double, std::milli>(c.join_tolerance_ms)),
                                 .lateness = std::chrono::seconds(60)},
                                {.process = kProcesses[2]});
  p.connect(detector, joined);
  p.connect(tachometer_readings, joined);
  p.connect(joined, p.sink("monitor", std::move(monitor), {.process = kProcesses[2]}));
}

Summary run_in_process(const Config& c, std::ostream& out, Progress progress) {
  Pipeline p(pipeline_options(c));
  auto monitor = std::make_shared<Monitor>(c, out, progress, p.run_log());
  add_sensor_monitor(p, c, monitor);
  p.run();
  return monitor->summary();
}

}  // namespace sluice::sensor_monitor
