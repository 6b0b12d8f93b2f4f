// One process of the sensor monitor as a partitioned pipeline, for
// bench/partitioned.cpp: bench_partition_child PROCESS PLACEMENT CHUNKS.
// The sink process prints the seconds from the first chunk made to the
// last scored (the monitor's own clock, so start-up and compiling are not
// counted).

#include <iostream>
#include <sstream>

#include "bench/host_settings.h"
#include <sensor_monitor/sensor_monitor.h>

int main(int argc, char** argv) {
  namespace sm = sluice::sensor_monitor;
  sluice::bench::ask_for_fast_host_settings();
  if (argc != 4) {
    std::cerr << "usage: bench_partition_child PROCESS PLACEMENT CHUNKS\n";
    return 2;
  }
  try {
    sm::Config c;
    c.chunks = std::stoll(argv[3]);
    sluice::PipelineOptions o = sm::pipeline_options(c);
    o.partition = {.process = argv[1], .placement = sluice::parse_placement(argv[2], "the benchmark")};
    sluice::Pipeline p(o);
    std::ostringstream quiet;
    auto monitor = std::make_shared<sm::Monitor>(c, quiet, sm::Progress::Off);
    sm::add_sensor_monitor(p, c, monitor);
    p.run();
    if (std::string(argv[1]) == "sink") std::cout << monitor->summary().seconds << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_partition_child " << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
}
