// One process of the sensor monitor as a partitioned pipeline, for
// bench/partitioned.cpp: bench_partition_child PROCESS PLACEMENT CHUNKS.
// The sink process prints the seconds from the first chunk made to the
// last scored (the monitor's own clock, so start-up and compiling are not
// counted). With PROCESS `whole` the whole pipeline runs here, not
// partitioned, and PLACEMENT names the host client's settings instead:
// `defaults` (ClientOptions{}, as a library user gets them, and as every
// other process here runs) or `tuned` (bench/host_settings.h); it prints
// its seconds.

#include <iostream>
#include <sstream>

#include "bench/host_settings.h"
#include <sensor_monitor/sensor_monitor.h>

int main(int argc, char** argv) {
  namespace sm = sluice::sensor_monitor;
  if (argc != 4) {
    std::cerr << "usage: bench_partition_child PROCESS PLACEMENT CHUNKS\n"
                 "       bench_partition_child whole defaults|tuned CHUNKS\n";
    return 2;
  }
  const std::string process = argv[1], placement = argv[2];
  const bool whole = process == "whole";
  if (whole && placement != "defaults" && placement != "tuned") {
    std::cerr << "bench_partition_child whole: expected defaults or tuned, found " << placement << "\n";
    return 2;
  }
  if (whole && placement == "tuned") sluice::bench::ask_for_tuned_host_settings();
  try {
    sm::Config c;
    c.chunks = std::stoll(argv[3]);
    sluice::PipelineOptions o = sm::pipeline_options(c);
    if (!whole)
      o.partition = {.process = process, .placement = sluice::parse_placement(placement, "the benchmark")};
    sluice::Pipeline p(o);
    std::ostringstream quiet;
    auto monitor = std::make_shared<sm::Monitor>(c, quiet, sm::Progress::Off);
    sm::add_sensor_monitor(p, c, monitor);
    p.run();
    if (whole || process == "sink") std::cout << monitor->summary().seconds << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_partition_child " << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
}
