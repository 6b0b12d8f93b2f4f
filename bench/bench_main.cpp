// main of every benchmark program: Google Benchmark's, plus --report=FILE,
// where the rows the benchmarks recorded are written as a JSON fragment.
// The rows are printed as a table after the benchmarks either way. The
// host client is what a library user gets: default options.

#include <cstring>
#include <iostream>
#include <string>

#include <benchmark/benchmark.h>

#include "bench/bench_report.h"

int main(int argc, char** argv) {
  constexpr const char* kReportFlag = "--report=";
  std::string report_path;
  int kept = 0;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], kReportFlag, std::strlen(kReportFlag)) == 0)
      report_path = argv[i] + std::strlen(kReportFlag);
    else
      argv[kept++] = argv[i];
  }
  argc = kept;

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  const auto& rows = sluice::bench::reported();
  std::cout << "\n" << sluice::bench::table(rows);
  if (!report_path.empty()) sluice::bench::write_fragment(report_path, rows);
  return 0;
}
