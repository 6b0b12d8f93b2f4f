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
  // Asked for first, as sluice's own programs do: the process-wide settings
  // its computations run fastest with (ClientOptions, devices/backend.h).
  sluice::client("host", {.raise_worker_limit = true, .blas_threads = 1});
  namespace sm = sluice::sensor_monitor;
  sm::Config config;
  if (argc > 1) config.seconds = std::atof(argv[1]);

  auto progress = isatty(STDOUT_FILENO) ? sm::Progress::Line : sm::Progress::Log;
  sm::Summary summary = sm::run_in_process(config, std::cout, progress);
  sm::print_summary(std::cout, summary, config);
  return summary.learned() ? 0 : 1;
}
