#include "tools/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "tools/report/svg_chart.h"
#include "tools/report/svg_graph.h"

namespace sluice::tools::report {
namespace {

constexpr size_t kMostPoints = 1500;  // a line has no more points than a chart has pixels

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
svg.graph { max-width: 900px; } svg.graph text { font-size: 12px; fill: #333; text-anchor: middle; }
svg.graph .node rect { fill: #f3f6fa; stroke: #4a6785; stroke-width: 1.5; } svg.graph .kind { fill: #667; font-size: 11px; }
svg.graph .specs { font-size: 11px; fill: #555; }
svg.graph .edge path { fill: none; stroke: #777; stroke-width: 1.4; } svg.graph .edge .head { fill: #777; stroke: none; }
svg.graph .process rect { fill: none; stroke: #999; stroke-dasharray: 5 4; } svg.graph .process text { text-anchor: start; fill: #666; }
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

// Records are written every so often, each with the consecutive windows of
// one chunk. Every `step`-th record, so that a chart has at most `most`
// windows; each record's windows spread evenly over the time since the
// record before (the first over as long as the second), so that a window
// has a place on the time axis. Returns the records kept and each window's start.
template <typename Record>
std::vector<const Record*> records_to_draw(const std::vector<Record>& all, size_t windows_each, size_t most) {
  const size_t step = std::max<size_t>(1, (all.size() * windows_each + most - 1) / std::max<size_t>(most, 1));
  std::vector<const Record*> kept;
  for (size_t i = 0; i < all.size(); i += step) kept.push_back(&all[i]);
  return kept;
}
template <typename Record>
std::vector<double> window_times(const std::vector<const Record*>& records) {
  std::vector<double> x;
  for (size_t k = 0; k < records.size(); ++k) {
    const double to = records[k]->t;
    const double from = k ? records[k - 1]->t : (records.size() > 1 ? 2 * to - records[1]->t : to - 1);
    const size_t n = records[k]->labels.size();
    for (size_t i = 0; i < n; ++i)
      x.push_back(from + (to - from) * static_cast<double>(i) / static_cast<double>(n));
  }
  return x;
}

constexpr size_t kMostSpectrogramWindows = 480;  // columns: about a pixel each on the page
constexpr size_t kMostScoredWindows = 6000;

std::string spectrogram_section(const RunData& d) {
  std::vector<const SpectrumChunk*> kept =
      records_to_draw(d.spectrogram, d.spectrogram.front().labels.size(), kMostSpectrogramWindows);
  HeatmapData h{.title = "Spectrogram of channel " + std::to_string(kept.front()->channel),
                .x_label = "seconds since the log's first record",
                .y_label = "frequency band",
                .value_label = "z-score"};
  h.x = window_times(kept);
  std::vector<double> all;
  for (const SpectrumChunk* c : kept) {
    for (size_t i = 0; i < c->windows.size(); ++i) {
      h.columns.push_back(c->windows[i]);
      h.strip.push_back(c->labels[i] > 0.5 ? 1 : 0);
      for (double v : c->windows[i])
        if (std::isfinite(v)) all.push_back(v);
    }
  }
  h.x_end = kept.back()->t;
  // The scale spans the bulk of the values: a few outliers do not wash out the rest.
  if (!all.empty()) {
    std::sort(all.begin(), all.end());
    h.lo = all[static_cast<size_t>(0.01 * static_cast<double>(all.size() - 1))];
    h.hi = all[static_cast<size_t>(0.99 * static_cast<double>(all.size() - 1))];
    if (!(h.hi > h.lo)) h.hi = h.lo + 1;
  }
  h.strip_label = "fault";
  return "<h2>Spectrogram</h2>\n<p class=\"note\">What the spectrum stage made of one channel: log energy "
         "per "
         "frequency band, normalised by the running mean and variance. A record holds one chunk's "
         "consecutive "
         "windows, written every so often; " +
         std::to_string(kept.size()) + " of " + std::to_string(d.spectrogram.size()) +
         " records drawn, each over the time since the one before. The strip below marks the windows that "
         "had a fault.</p>\n" +
         heatmap(h);
}

std::string scores_section(const RunData& d) {
  std::vector<const ScoredChunk*> kept =
      records_to_draw(d.scores, d.scores.front().labels.size(), kMostScoredWindows);
  std::vector<double> x = window_times(kept), score, label;
  for (const ScoredChunk* c : kept) {
    score.insert(score.end(), c->scores.begin(), c->scores.end());
    label.insert(label.end(), c->labels.begin(), c->labels.end());
  }
  // Faults as shaded intervals: each run of faulty windows, merged.
  std::vector<Shade> faults;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(label[i] > 0.5)) continue;
    const double to = i + 1 < x.size() ? x[i + 1] : kept.back()->t;
    if (!faults.empty() && faults.back().to >= x[i])
      faults.back().to = to;
    else
      faults.push_back({x[i], to});
  }
  LineSeries scores{.name = "fault score", .x = x, .y = score};
  LineSeries threshold{
      .name = "threshold 0.5", .x = {x.front(), kept.back()->t}, .y = {0.5, 0.5}, .dashed = true};

  // Accuracy: the monitor's, over every window so far and over the windows between records.
  LineSeries so_far{.name = "accuracy so far"}, recent{.name = "since the record before"};
  for (const ScoredChunk& c : d.scores) {
    so_far.x.push_back(c.t);
    so_far.y.push_back(c.accuracy);
    recent.x.push_back(c.t);
    recent.y.push_back(c.recent_accuracy);
  }
  const std::string x_label = "seconds since the log's first record";
  return "<h2>Fault detector</h2>\n<p class=\"note\">The detector's score of each window (a probability of a "
         "fault; above 0.5 it calls one), made before it learned from that window, against where faults "
         "really "
         "were, shaded. The monitor records one chunk's windows every so often; " +
         std::to_string(kept.size()) + " of " + std::to_string(d.scores.size()) +
         " records drawn, each over the time since the one before.</p>\n" +
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

std::string graph_section(const PipelineGraph& g) {
  return "<h2>Pipeline</h2>\n<p class=\"note\">Its nodes and the specs each edge carries, as the pipeline "
         "wrote them when its run started" +
         std::string(std::any_of(g.nodes.begin(), g.nodes.end(),
                                 [](const GraphNode& n) { return !n.process.empty(); })
                         ? "; each process's nodes in a dashed box"
                         : "") +
         ".</p>\n" + graph_picture(g);
}

// "1 slice", "2 slices".
std::string counted(size_t n, const std::string& what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string timeline_section(const Timeline& t) {
  return "<h2>Timeline</h2>\n<p class=\"note\">From the run's trace (" +
         escape(std::filesystem::path(t.path).filename().string()) + ": " + counted(t.slices_total, "slice") +
         ", " + counted(t.messages_total, "message") +
         "): a window starting at the message in the middle of the run, the lines following " +
         counted(t.flows.size(), "message") +
         " through the nodes and processes they passed. Open the trace itself in ui.perfetto.dev for all of "
         "it.</p>\n" +
         timeline_picture(t);
}

}  // namespace

std::string html_report(const RunData& d, const std::optional<Timeline>& timeline) {
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
  if (d.graph) s += graph_section(*d.graph);
  s += stages_section(d);
  if (!d.spectrogram.empty()) s += spectrogram_section(d);
  if (!d.scores.empty()) s += scores_section(d);
  if (timeline) s += timeline_section(*timeline);
  return s + "</body>\n</html>\n";
}

}  // namespace sluice::tools::report
