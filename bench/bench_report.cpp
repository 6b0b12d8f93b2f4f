#include "bench/bench_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;  // keeps "name" first in the files

std::vector<Row>& rows() {
  static std::vector<Row> all;
  return all;
}

const char* better_name(Better b) { return b == Better::Higher ? "higher" : "lower"; }

Better better_from_name(const std::string& name, const std::string& where) {
  if (name == "higher") return Better::Higher;
  if (name == "lower") return Better::Lower;
  throw std::runtime_error(where + ": better: expected \"higher\" or \"lower\", found \"" + name + "\"");
}

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// "12.3 ms", "1.24 us": three significant digits in the unit that fits.
std::string format_seconds(double s) {
  if (s >= 1) return format("%.3g s", s);
  if (s >= 1e-3) return format("%.3g ms", s * 1e3);
  if (s >= 1e-6) return format("%.3g us", s * 1e6);
  return format("%.3g ns", s * 1e9);
}

std::string format_value(double v, const std::string& unit) {
  return format("%.3g", v) + (unit == "x" ? "x" : " " + unit);
}

Json fragment_json(const Row& r) {
  Json j{{"name", r.name},   {"sluice_s", r.sluice_s}, {"baseline_s", nullptr}, {"value", r.value},
         {"goal", r.goal},   {"better", better_name(r.better)}, {"unit", r.unit}};
  if (r.baseline_s) j["baseline_s"] = *r.baseline_s;
  return j;
}

Json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("bench: cannot read " + path);
  return Json::parse(in);
}

void write_json(const std::string& path, const Json& j) {
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  if (!out) throw std::runtime_error("bench: cannot write " + path);
}

}  // namespace

Trial timed(std::function<void()> fn, int calls) {
  return [fn = std::move(fn), calls] {
    auto start = Clock::now();
    for (int i = 0; i < calls; ++i) fn();
    return std::chrono::duration<double>(Clock::now() - start).count() / calls;
  };
}

Trial settled(Trial trial) {
  return [trial = std::move(trial)] {
    const double seconds = trial();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return seconds;
  };
}

Samples interleave(benchmark::State& state, const Trial& sluice, const Trial& baseline) {
  sluice();
  baseline();
  Samples s;
  for (auto _ : state) {
    double t_sluice = 0, t_baseline = 0;
    if (s.sluice.size() % 2 == 0) {
      t_sluice = sluice();
      t_baseline = baseline();
    } else {
      t_baseline = baseline();
      t_sluice = sluice();
    }
    s.sluice.push_back(t_sluice);
    s.baseline.push_back(t_baseline);
    state.SetIterationTime(t_sluice);
  }
  state.counters["sluice_ms"] = median(s.sluice) * 1e3;
  state.counters["baseline_ms"] = median(s.baseline) * 1e3;
  state.counters["speedup"] = speedup(s);
  return s;
}

std::vector<double> measure(benchmark::State& state, const Trial& sluice) {
  sluice();
  std::vector<double> seconds;
  for (auto _ : state) {
    seconds.push_back(sluice());
    state.SetIterationTime(seconds.back());
  }
  state.counters["sluice_us"] = median(seconds) * 1e6;
  return seconds;
}

bool check_close(benchmark::State& state, std::span<const float> got, std::span<const float> want,
                 double tolerance) {
  std::string error;
  if (got.size() != want.size()) error = "sluice gave " + std::to_string(got.size()) + " values, the baseline " +
                                         std::to_string(want.size());
  for (size_t i = 0; error.empty() && i < got.size(); ++i) {
    // Written so that a NaN on either side fails.
    if (!(std::abs(double{got[i]} - double{want[i]}) <= tolerance * (1 + std::abs(double{want[i]}))))
      error = "sluice and the baseline disagree at element " + std::to_string(i) + ": " +
              std::to_string(got[i]) + " vs " + std::to_string(want[i]);
  }
  if (error.empty()) return true;
  state.SkipWithError(error.c_str());
  return false;
}

std::vector<float> uniform_floats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

double speedup(const Samples& s) {
  std::vector<double> ratios;
  for (size_t i = 0; i < s.sluice.size() && i < s.baseline.size(); ++i)
    ratios.push_back(s.baseline[i] / s.sluice[i]);
  return median(std::move(ratios));
}

void report_speedup(const std::string& name, const Samples& s, double goal) {
  report({.name = name,
          .sluice_s = median(s.sluice),
          .baseline_s = median(s.baseline),
          .value = speedup(s),
          .goal = goal,
          .better = Better::Higher,
          .unit = "x"});
}

void report_time_us(const std::string& name, const std::vector<double>& seconds, double goal_us) {
  double s = median(seconds);
  report({.name = name,
          .sluice_s = s,
          .baseline_s = std::nullopt,
          .value = s * 1e6,
          .goal = goal_us,
          .better = Better::Lower,
          .unit = "us"});
}

void report(Row row) {
  auto& all = rows();
  auto same = std::find_if(all.begin(), all.end(), [&](const Row& r) { return r.name == row.name; });
  if (same != all.end())
    *same = std::move(row);
  else
    all.push_back(std::move(row));
}

const std::vector<Row>& reported() { return rows(); }

void write_fragment(const std::string& path, const std::vector<Row>& rows) {
  Json list = Json::array();
  for (const Row& r : rows) list.push_back(fragment_json(r));
  write_json(path, list);
}

std::vector<Row> read_fragment(const std::string& path) {
  std::vector<Row> out;
  for (const Json& j : read_json(path)) {
    Row r;
    r.name = j.at("name").get<std::string>();
    r.sluice_s = j.at("sluice_s").get<double>();
    if (!j.at("baseline_s").is_null()) r.baseline_s = j.at("baseline_s").get<double>();
    r.value = j.at("value").get<double>();
    r.goal = j.at("goal").get<double>();
    r.better = better_from_name(j.at("better").get<std::string>(), path + ": " + r.name);
    r.unit = j.at("unit").get<std::string>();
    out.push_back(std::move(r));
  }
  return out;
}

void write_results(const std::string& path, const std::vector<Row>& rows) {
  Json list = Json::array();
  for (const Row& r : rows)
    list.push_back({{"name", r.name},
                    {"value", r.value},
                    {"goal", r.goal},
                    {"better", better_name(r.better)},
                    {"unit", r.unit}});
  write_json(path, list);
}

std::string table(const std::vector<Row>& rows) {
  using Line = std::vector<std::string>;
  std::vector<Line> lines{{"name", "sluice", "baseline", "ratio", "goal"}};
  for (const Row& r : rows) {
    bool ratio = r.unit == "x";
    lines.push_back({r.name, format_seconds(r.sluice_s), r.baseline_s ? format_seconds(*r.baseline_s) : "-",
                     ratio ? format_value(r.value, r.unit) : "-",
                     std::string(r.better == Better::Higher ? ">= " : "<= ") + format_value(r.goal, r.unit) +
                         (r.met() ? "  met" : "  MISSED")});
  }
  std::vector<size_t> widths(lines[0].size(), 0);
  for (const Line& l : lines)
    for (size_t c = 0; c < l.size(); ++c) widths[c] = std::max(widths[c], l[c].size());
  std::ostringstream out;
  for (size_t i = 0; i < lines.size(); ++i) {
    for (size_t c = 0; c < lines[i].size(); ++c) {
      if (c > 0) out << " | ";
      out << lines[i][c] << std::string(c + 1 < lines[i].size() ? widths[c] - lines[i][c].size() : 0, ' ');
    }
    out << "\n";
    if (i == 0) {
      for (size_t c = 0; c < widths.size(); ++c) out << (c > 0 ? "-|-" : "") << std::string(widths[c], '-');
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace sluice::bench
