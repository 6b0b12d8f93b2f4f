// sluice_bench_merge RESULTS FRAGMENT...: merges the rows the benchmark
// programs wrote into RESULTS (a JSON list of {name, value, goal, better,
// unit}) and prints the table. Missed goals are shown, not fatal: a noisy
// run should not hide the other results.

#include <exception>
#include <iostream>
#include <vector>

#include "bench/bench_report.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: sluice_bench_merge RESULTS FRAGMENT...\n";
    return 2;
  }
  try {
    std::vector<sluice::bench::Row> rows;
    for (int i = 2; i < argc; ++i)
      for (auto& r : sluice::bench::read_fragment(argv[i])) rows.push_back(std::move(r));
    sluice::bench::write_results(argv[1], rows);
    int missed = 0;
    for (const auto& r : rows) missed += r.met() ? 0 : 1;
    std::cout << "\n" << sluice::bench::table(rows) << "\n"
              << rows.size() - static_cast<size_t>(missed) << " of " << rows.size() << " goals met; results in "
              << argv[1] << "\n";
  } catch (const std::exception& e) {
    std::cerr << "sluice_bench_merge: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
