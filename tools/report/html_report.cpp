#include "tools/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "tools/report/svg_chart.h"

namespace sluice::tools::report {
namespace {

constexpr size_t kMostPoints = 1500;     // a line has no more points than a chart has pixels
constexpr size_t kRollingWindows = 256;  // the recent accuracy's span

constexpr const char* kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; max-width: 1000px; color: #222; background: #fff; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
p.note { color: #555; margin: 4px 0 10px; } .warning { color: #a04000; }
table { border-collapse: collapse; margin: 8px 0; } td, th { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right; }
td:first-child, th:first-child { text-align: left; }
svg.chart { width: 100%; height: auto; display: block; margin: 6px 0 18px; }
svg .title { font-size: 15px; font-weight: 600; fill: #222; }
svg .tick, svg .legend { font-size: 12px; fill: #444; } svg .label { font-size: 13px; fill: #333; }
svg .grid { stroke: #e6e6e6; } svg .tickmark { stroke: #888; } svg .frame { fill: none; stroke: #999; }
svg .series { fill: none; stroke-width: 1.8; stroke-linejoin: round; } svg .swatch { stroke-width: 2.5; }
svg .shade { fill: #d55e00; fill-opacity: 0.15; } svg .strip { fill: #d55e00; }
)";

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Every `step`-th point, so that a line stays under kMostPoints.
LineSeries thinned(LineSeries s) {
  if (s.x.size() <= kMostPoints) return s;
  const size_t step = (s.x.size() + kMostPoints - 1) / kMostPoints;
  LineSeries out{.name = s.name, .step = s.step, .dashed = s.dashed};
  for (size_t i = 0; i < s.x.size(); i += step) {
    out.x.push_back(s.x[i]);
    out.y.push_back(s.y[i]);
  }
  out.x.push_back(s.x.back());
  out.y.push_back(s.y.back());
  return out;
}

std::string per_node_chart(const RunData& d, const std::string& title, const std::string& y_label,
                           std::vector<double> NodeSeries::*values) {
  std::vector<LineSeries> series;
  for (const NodeSeries& n : d.nodes)
    series.push_back(thinned({.name = n.label(), .x = n.t, .y = n.*values}));
  return line_chart({.title = title, .x_label = "seconds since the log's first record", .y_label = y_label},
                    series);
}

std::string stages_section(const RunData& d) {
  std::string s = "<h2>Stages</h2>\n";
  if (d.nodes.empty()) return s + "<p class=\"note\">No metrics records in this log.</p>\n";
  s += "<p class=\"note\">From the pipeline's metrics snapshots (metrics_json's fields), per node";
  s += d.processes.size() > 1 ? ", named by the process that ran it." : ".";
  s += " Rates are over the pipeline's rate window (up to 10 s); latencies, from a message's birth at its "
       "source "
       "to leaving the node, are percentiles since the run started.</p>\n";
  s += per_node_chart(d, "Throughput", "messages out per second", &NodeSeries::rate);
  s += per_node_chart(d, "Latency p50", "milliseconds", &NodeSeries::p50_ms);
  s += per_node_chart(d, "Latency p99", "milliseconds", &NodeSeries::p99_ms);
  s += per_node_chart(d, "Queue depth", "messages waiting to enter the node", &NodeSeries::queue_depth);
  s += "<table>\n<tr><th>node</th><th>kind</th><th>messages in</th><th>messages out</th><th>errors</th>"
       "<th>latency p50 (ms)</th><th>latency p99 (ms)</th></tr>\n";
  for (const NodeSeries& n : d.nodes)
    s += "<tr><td>" + escape(n.label()) + "</td><td>" + escape(n.kind) + "</td><td>" +
         fixed(n.messages_in, 0) + "</td><td>" + fixed(n.messages_out, 0) + "</td><td>" + fixed(n.errors, 0) +
         "</td><td>" + fixed(n.p50_ms.empty() ? 0 : n.p50_ms.back(), 2) + "</td><td>" +
         fixed(n.p99_ms.empty() ? 0 : n.p99_ms.back(), 2) + "</td></tr>\n";
  return s + "</table>\n";
}

std::string spectrogram_section(const RunData& d) {
  const std::vector<SpectrumColumn>& cols = d.spectrogram;
  HeatmapData h{.title = "Spectrogram of channel " + std::to_string(cols.front().channel),
                .x_label = "seconds since the log's first record",
                .y_label = "frequency band",
                .value_label = "z-score"};
  std::vector<double> all;
  for (const SpectrumColumn& c : cols) {
    h.x.push_back(c.t);
    h.columns.push_back(c.bands);
    h.strip.push_back(c.fault_share);
    for (double v : c.bands)
      if (std::isfinite(v)) all.push_back(v);
  }
  // Each column's time is when it was written, the end of what it covers:
  // it is drawn from there to the next.
  const double last_step = cols.size() > 1 ? cols.back().t - cols[cols.size() - 2].t : 1;
  h.x_end = cols.back().t + last_step;
  // The scale spans the bulk of the values: a few outliers do not wash out the rest.
  if (!all.empty()) {
    std::sort(all.begin(), all.end());
    h.lo = all[static_cast<size_t>(0.01 * static_cast<double>(all.size() - 1))];
    h.hi = all[static_cast<size_t>(0.99 * static_cast<double>(all.size() - 1))];
    if (!(h.hi > h.lo)) h.hi = h.lo + 1;
  }
  h.strip_label = "faults";
  return "<h2>Spectrogram</h2>\n<p class=\"note\">What the spectrum stage made of one channel: log energy "
         "per "
         "frequency band, normalised by the running mean and variance, averaged over the windows of each "
         "record. The strip below is the share of those windows that had a fault.</p>\n" +
         heatmap(h);
}

std::string scores_section(const RunData& d) {
  // Each chunk's windows spread evenly over the time since the chunk before it.
  std::vector<double> x, score, label;
  for (size_t k = 0; k < d.scores.size(); ++k) {
    const ScoredChunk& c = d.scores[k];
    const double from = k ? d.scores[k - 1].t : c.t;
    const size_t n = c.scores.size();
    for (size_t i = 0; i < n; ++i) {
      x.push_back(from + (c.t - from) * static_cast<double>(i + 1) / static_cast<double>(n));
      score.push_back(c.scores[i]);
      label.push_back(c.labels[i]);
    }
  }
  // Faults as shaded intervals: each run of faulty windows, merged.
  std::vector<Shade> faults;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(label[i] > 0.5)) continue;
    const double from = i ? x[i - 1] : x[i], to = x[i];
    if (!faults.empty() && faults.back().to >= from)
      faults.back().to = to;
    else
      faults.push_back({from, to});
  }
  // Scores, as the mean of buckets of windows when there are more than a chart shows.
  LineSeries scores{.name = "fault score"};
  const size_t bucket = std::max<size_t>(1, (x.size() + kMostPoints - 1) / kMostPoints);
  for (size_t i = 0; i < x.size(); i += bucket) {
    double sx = 0, sy = 0;
    size_t n = 0;
    for (size_t j = i; j < x.size() && j < i + bucket; ++j, ++n) {
      sx += x[j];
      sy += score[j];
    }
    scores.x.push_back(sx / static_cast<double>(n));
    scores.y.push_back(sy / static_cast<double>(n));
  }
  LineSeries threshold{.name = "threshold 0.5", .dashed = true};
  if (!x.empty())
    threshold = {.name = "threshold 0.5", .x = {x.front(), x.back()}, .y = {0.5, 0.5}, .dashed = true};

  // Accuracy: the monitor's, over every window so far, and over the most recent windows.
  LineSeries so_far{.name = "accuracy so far"},
      recent{.name = "last " + std::to_string(kRollingWindows) + " windows"};
  for (const ScoredChunk& c : d.scores) {
    so_far.x.push_back(c.t);
    so_far.y.push_back(c.accuracy);
  }
  size_t correct = 0;
  std::vector<bool> right(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    right[i] = (score[i] > 0.5) == (label[i] > 0.5);  // the monitor's rule
    correct += right[i];
    if (i >= kRollingWindows) correct -= right[i - kRollingWindows];
    if (i + 1 >= std::min(kRollingWindows, x.size())) {
      recent.x.push_back(x[i]);
      recent.y.push_back(static_cast<double>(correct) /
                         static_cast<double>(std::min(i + 1, kRollingWindows)));
    }
  }
  const std::string x_label = "seconds since the log's first record";
  return "<h2>Fault detector</h2>\n<p class=\"note\">The detector's score of every window (a probability of "
         "a "
         "fault; above 0.5 it calls one) against where faults really were, shaded. Each score is a "
         "prediction "
         "made before the detector learned from that window.</p>\n" +
         line_chart({.title = "Scores against the true faults",
                     .x_label = x_label,
                     .y_label = "fault score",
                     .y_min = 0.0,
                     .y_max = 1.0,
                     .shade_label = "true fault"},
                    {scores, threshold}, faults) +
         line_chart({.title = "Accuracy over time",
                     .x_label = x_label,
                     .y_label = "windows called right",
                     .y_min = 0.0,
                     .y_max = 1.0},
                    {thinned(so_far), thinned(recent)});
}

}  // namespace

std::string html_report(const RunData& d) {
  const std::string name = std::filesystem::path(d.path).filename().string();
  std::string processes;
  for (const std::string& p : d.processes)
    if (!p.empty()) processes += (processes.empty() ? "" : ", ") + p;
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>sluice run report: " +
      escape(name) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  s += "<h1>sluice run report</h1>\n<p class=\"note\">" + escape(name) + ": " + std::to_string(d.records) +
       " records over " + fixed(d.duration_s, 1) + " s" +
       (processes.empty() ? "" : " from processes " + escape(processes)) + ".</p>\n";
  for (const std::string& w : d.warnings) s += "<p class=\"note warning\">" + escape(w) + "</p>\n";
  s += stages_section(d);
  if (!d.spectrogram.empty()) s += spectrogram_section(d);
  if (!d.scores.empty()) s += scores_section(d);
  return s + "</body>\n</html>\n";
}

}  // namespace sluice::tools::report
