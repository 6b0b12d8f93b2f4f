#include "tools/report/svg_timeline.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include <sluice/base/error.h>
#include "tools/report/svg_chart.h"

namespace sluice::tools::report {
namespace {

constexpr double kLabelWidth = 170, kPlotWidth = 760, kRowHeight = 22, kTop = 40, kAxis = 34, kLegendRow = 20;
constexpr size_t kFlowsDrawn = 3;

[[noreturn]] void refuse(const std::string& path, const std::string& what) {
  throw ValueError(error_message("sluice report --trace", "'" + path + "': " + what, "", ""));
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

Timeline read_trace(const std::string& path, double window_ms) {
  std::ifstream in(path);
  if (!in) refuse(path, std::string("cannot be read: ") + std::strerror(errno));
  nlohmann::json trace;
  try {
    trace = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) { refuse(path, std::string("not JSON: ") + e.what()); }
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array())
    refuse(path, "no traceEvents list (expected a Chrome trace, as PipelineOptions::trace writes)");
  struct Slice {
    int64_t pid, tid;
    std::string name;
    double ts, dur;
  };
  std::map<int64_t, std::string> process_names;
  std::vector<int64_t> process_order;
  std::vector<Slice> slices;
  std::map<uint64_t, std::vector<std::pair<double, std::pair<int64_t, int64_t>>>> flows;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    const std::string ph = e.value("ph", "");
    try {
      if (ph == "M" && e.value("name", "") == "process_name") {
        const int64_t pid = e.at("pid").get<int64_t>();
        if (!process_names.contains(pid)) process_order.push_back(pid);
        process_names[pid] = e.at("args").at("name").get<std::string>();
      } else if (ph == "X") {
        slices.push_back({e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>(),
                          e.at("name").get<std::string>(), e.at("ts").get<double>(),
                          e.at("dur").get<double>()});
        // A slice bound to its message's flow (flow events v2, as sluice writes them).
        if (e.contains("bind_id"))
          flows[e.at("bind_id").get<uint64_t>()].push_back(
              {slices.back().ts, {slices.back().pid, slices.back().tid}});
      } else if (e.value("cat", "") == "flow") {
        // A flow event of its own (v1, as other tools and sluice's earlier traces write them).
        flows[e.at("id").get<uint64_t>()].push_back(
            {e.at("ts").get<double>(), {e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>()}});
      }
    } catch (const nlohmann::json::exception& x) {
      refuse(path, "an event without its fields (" + std::string(x.what()) + "): " + e.dump().substr(0, 200));
    }
  }
  if (slices.empty()) refuse(path, "no slices (\"ph\":\"X\") to draw");
  Timeline t{.path = path,
             .window_us = window_ms * 1e3,
             .slices_total = slices.size(),
             .messages_total = flows.size()};
  // Rows: the processes in the order the trace names them, then any other;
  // within each, its threads by id.
  std::set<std::pair<int64_t, int64_t>> threads;
  for (const Slice& s : slices) {
    threads.insert({s.pid, s.tid});
    if (!process_names.contains(s.pid)) {
      process_order.push_back(s.pid);
      process_names[s.pid] = "process " + std::to_string(s.pid);
    }
  }
  std::map<std::pair<int64_t, int64_t>, size_t> row_of;
  for (int64_t pid : process_order)
    for (const auto& [p, tid] : threads)
      if (p == pid) {
        row_of[{p, tid}] = t.rows.size();
        t.rows.push_back(process_names[pid] + ", thread " + std::to_string(tid));
      }
  // The window: from the first event of the message in the middle of the
  // run (by flow id), else from the middle slice.
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) { return a.ts < b.ts; });
  double start = slices[slices.size() / 2].ts;
  std::vector<uint64_t> ids;
  for (const auto& [id, points] : flows) ids.push_back(id);
  if (!ids.empty()) {
    const auto& middle = flows[ids[ids.size() / 2]];
    start = std::min_element(middle.begin(), middle.end())->first;
  }
  std::map<std::string, size_t> node_of;
  for (const Slice& s : slices) {
    if (s.ts + s.dur < start || s.ts > start + t.window_us) continue;
    auto [it, added] = node_of.try_emplace(s.name, t.nodes.size());
    if (added) t.nodes.push_back(s.name);
    t.slices.push_back({row_of[{s.pid, s.tid}], it->second, s.ts - start, s.dur});
  }
  // A few messages that start in the window's first half, followed.
  for (uint64_t id : ids) {
    auto points = flows[id];
    std::sort(points.begin(), points.end());
    if (points.front().first < start || points.front().first > start + t.window_us / 2) continue;
    std::vector<std::pair<double, size_t>> line;
    for (const auto& [ts, thread] : points) line.push_back({ts - start, row_of[thread]});
    t.flows.push_back(line);
    if (t.flows.size() == kFlowsDrawn) break;
  }
  return t;
}

std::string timeline_picture(const Timeline& t) {
  const double height = kTop + kRowHeight * static_cast<double>(t.rows.size()) + kAxis +
                        kLegendRow * static_cast<double>((t.nodes.size() + 3) / 4);
  const double width = kLabelWidth + kPlotWidth + 20;
  const double per_us = kPlotWidth / t.window_us;
  auto x_of = [&](double us) { return kLabelWidth + std::clamp(us, 0.0, t.window_us) * per_us; };
  auto y_of = [&](size_t row) { return kTop + kRowHeight * static_cast<double>(row); };
  std::string s =
      "<svg class=\"chart timeline\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
      "aria-label=\"Timeline\" viewBox=\"0 0 " +
      number(width) + " " + number(height) + "\">\n";
  s += "<text class=\"title\" x=\"" + number(kLabelWidth) + "\" y=\"20\">" +
       escape(number(t.window_us / 1e3) + " ms of the run: each node's slices on the thread that ran them") +
       "</text>\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    s += "<text class=\"label\" x=\"4\" y=\"" + number(y_of(r) + kRowHeight * 0.7) + "\">" +
         escape(t.rows[r]) + "</text>\n";
    s += "<line class=\"grid\" x1=\"" + number(kLabelWidth) + "\" x2=\"" + number(kLabelWidth + kPlotWidth) +
         "\" y1=\"" + number(y_of(r + 1)) + "\" y2=\"" + number(y_of(r + 1)) + "\"/>\n";
  }
  // A slice at least half a pixel wide, so that a short one still shows.
  s += "<g class=\"slices\">\n";
  for (const TimelineSlice& sl : t.slices) {
    const double x0 = x_of(sl.start_us), x1 = std::max(x_of(sl.start_us + sl.dur_us), x0 + 0.5);
    s += "<rect x=\"" + number(x0) + "\" y=\"" + number(y_of(sl.row) + 3) + "\" width=\"" + number(x1 - x0) +
         "\" height=\"" + number(kRowHeight - 6) + "\" fill=\"" + series_color(sl.node) + "\"/>\n";
  }
  s += "</g>\n<g class=\"flows\">\n";
  for (const auto& line : t.flows) {
    std::string points;
    for (const auto& [us, row] : line)
      points += number(x_of(us)) + "," + number(y_of(row) + kRowHeight / 2) + " ";
    s += "<polyline class=\"flow\" fill=\"none\" stroke=\"#222\" stroke-width=\"1\" points=\"" + points +
         "\"/>\n";
  }
  s += "</g>\n";
  const double axis_y = y_of(t.rows.size());
  for (int k = 0; k <= 4; ++k) {
    const double us = t.window_us * k / 4;
    s += "<text class=\"tick\" x=\"" + number(x_of(us)) + "\" y=\"" + number(axis_y + 16) +
         "\" text-anchor=\"middle\">" + number(us / 1e3) + " ms</text>\n";
  }
  for (size_t n = 0; n < t.nodes.size(); ++n) {
    const double lx = kLabelWidth + static_cast<double>(n % 4) * 190,
                 ly = axis_y + kAxis + kLegendRow * static_cast<double>(n / 4);
    s += "<rect class=\"swatch\" x=\"" + number(lx) + "\" y=\"" + number(ly - 10) +
         "\" width=\"12\" height=\"12\" fill=\"" + series_color(n) + "\"/><text class=\"legend\" x=\"" +
         number(lx + 18) + "\" y=\"" + number(ly) + "\">" + escape(t.nodes[n]) + "</text>\n";
  }
  return s + "</svg>\n";
}

}  // namespace sluice::tools::report
