// sensor_monitor [SECONDS]: the sensor monitor in one process, for SECONDS
// (default 20) of wall-clock time. Exits with 0 when the detector learned.
//
//   vibration ──> spectrum ──> detector ──> monitor
//
// The nodes are in sensor_monitor.h; `sluice demo` runs the same ones as
// three processes.

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include <sluice/devices/backend.h>
#include <sensor_monitor/sensor_monitor.h>

int main(int argc, char** argv) {
  namespace sm = sluice::sensor_monitor;
  sm::Config config;
  if (argc > 1) config.seconds = std::atof(argv[1]);

  auto progress = isatty(STDOUT_FILENO) ? sm::Progress::Line : sm::Progress::Log;
  sm::Summary summary = sm::run_in_process(config, std::cout, progress);
  sm::print_summary(std::cout, summary, config);
  return summary.learned() ? 0 : 1;
}
