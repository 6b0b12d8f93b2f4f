#pragma once
// The harness every sluice benchmark shares. A benchmark times sluice and its
// baseline side by side in one process, interleaved round by round so that a
// noisy machine slows both alike, and reports rows: each program writes its
// rows to the JSON file named by --report=FILE, and `make bench` merges them
// into build/bench-results.json and prints the table.
//
//   void BM_thing(benchmark::State& state) {
//     ... set up, compile, warm up ...
//     auto s = bench::interleave(state, bench::timed([&] { run_sluice(); }),
//                                bench::timed([&] { run_baseline(); }));
//     bench::report_speedup("thing", s, 0.9);
//   }
//   BENCHMARK(BM_thing)->Iterations(21)->UseManualTime();
//
// Programs link sluice_bench_main: main is Google Benchmark's, plus --report.

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace benchmark {
class State;
}

namespace sluice::bench {

enum class Better { Higher, Lower };

// One line of the results table.
struct Row {
  std::string name;
  double sluice_s = 0;              // sluice's median seconds per call
  std::optional<double> baseline_s;  // the baseline's; none for absolute rows
  double value = 0;                 // what the goal judges: a ratio, or an absolute measure
  double goal = 0;
  Better better = Better::Higher;
  std::string unit;  // of value and goal: "x" for ratios

  bool met() const { return better == Better::Higher ? value >= goal : value <= goal; }
};

// Runs some work and returns the seconds one call of it took.
using Trial = std::function<double()>;
// A Trial running `fn` `calls` times and returning the mean wall time per call.
Trial timed(std::function<void()> fn, int calls = 1);
// `trial`, then an untimed pause of 20 ms: against a baseline on oneDNN's
// OpenMP threads, which spin for milliseconds after a parallel region
// (GOMP_SPINCOUNT) and, measured back to back, held the cores through
// sluice's next run (conv: 0.64-0.87x, against 1.02x with
// OMP_WAIT_POLICY=passive). The pause lets either side start on idle
// cores, as a call that is not squeezed between two others does.
Trial settled(Trial trial);

// Seconds per call, one entry per round.
struct Samples {
  std::vector<double> sluice, baseline;
};

// Runs state's loop, one round per iteration: each round runs both trials,
// sluice first in even rounds and the baseline first in odd ones, so that
// drift and cache warmth fall on both alike. Each trial runs once before the
// first round, untimed. The iteration time is sluice's (register the
// benchmark with UseManualTime()); counters show the baseline and the ratio.
Samples interleave(benchmark::State& state, const Trial& sluice, const Trial& baseline);
// Runs state's loop with sluice alone: seconds per call, one per round.
std::vector<double> measure(benchmark::State& state, const Trial& sluice);

// Checks sluice's answer against the baseline's before anything is timed:
// false, and the benchmark marked failed (no row), when some element differs
// by more than `tolerance` * (1 + |want|). A complex counts as two floats.
bool check_close(benchmark::State& state, std::span<const float> got, std::span<const float> want,
                 double tolerance);
// n floats drawn uniformly from [lo, hi), the same for the same seed.
std::vector<float> uniform_floats(size_t n, float lo, float hi, unsigned seed);

double median(std::vector<double> v);
// How many times faster sluice is: the median over rounds of baseline / sluice.
double speedup(const Samples& s);

// Records a row judging speedup(s) (higher is better) against `goal`.
void report_speedup(const std::string& name, const Samples& s, double goal);
// Records a row judging sluice's median time per call in microseconds (lower
// is better) against `goal_us`.
void report_time_us(const std::string& name, const std::vector<double>& seconds, double goal_us);
// Records a row; a later row of the same name replaces it (repetitions).
void report(Row row);
// The rows recorded so far in this process.
const std::vector<Row>& reported();

// Rows as JSON: the fragment one program writes, and the merged results.
void write_fragment(const std::string& path, const std::vector<Row>& rows);
std::vector<Row> read_fragment(const std::string& path);
// build/bench-results.json: a list of {name, value, goal, better, unit}.
void write_results(const std::string& path, const std::vector<Row>& rows);
// "name | sluice | baseline | ratio | goal" with a mark for each goal met or missed.
std::string table(const std::vector<Row>& rows);

}  // namespace sluice::bench
