#include "tools/report/svg_graph.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tools/report/svg_chart.h"

namespace sluice::tools::report {
namespace {

constexpr double kNodeWidth = 150, kNodeHeight = 46, kColumnGap = 150, kRowGap = 40, kMargin = 36;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Each node's column: the longest path to it from a node with no inputs
// (edges that would close a cycle are ignored; a pipeline has none).
std::vector<size_t> columns(const PipelineGraph& g) {
  std::vector<size_t> column(g.nodes.size(), 0);
  for (size_t round = 0; round < g.nodes.size(); ++round) {
    bool moved = false;
    for (const GraphEdge& e : g.edges)
      if (column[e.to] < column[e.from] + 1 && column[e.from] + 1 < g.nodes.size()) {
        column[e.to] = column[e.from] + 1;
        moved = true;
      }
    if (!moved) break;
  }
  return column;
}

}  // namespace

std::string graph_picture(const PipelineGraph& g) {
  const std::vector<size_t> column = columns(g);
  std::vector<double> x(g.nodes.size()), y(g.nodes.size());
  std::vector<size_t> rows;  // nodes placed so far in each column
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (rows.size() <= column[i]) rows.resize(column[i] + 1, 0);
    x[i] = kMargin + static_cast<double>(column[i]) * (kNodeWidth + kColumnGap);
    y[i] = kMargin + 24 + static_cast<double>(rows[column[i]]++) * (kNodeHeight + kRowGap);
  }
  double width = 2 * kMargin, height = 2 * kMargin;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    width = std::max(width, x[i] + kNodeWidth + kMargin);
    height = std::max(height, y[i] + kNodeHeight + kMargin);
  }
  std::string s = "<svg class=\"chart graph\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                  number(width) + " " + number(height) + "\" role=\"img\" aria-label=\"The pipeline\">\n";
  // A box around each process's nodes, under everything else.
  std::vector<std::string> processes;
  for (const GraphNode& n : g.nodes)
    if (!n.process.empty() && std::find(processes.begin(), processes.end(), n.process) == processes.end())
      processes.push_back(n.process);
  for (const std::string& p : processes) {
    double left = width, top = height, right = 0, bottom = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (g.nodes[i].process == p) {
        left = std::min(left, x[i] - 12);
        top = std::min(top, y[i] - 26);
        right = std::max(right, x[i] + kNodeWidth + 12);
        bottom = std::max(bottom, y[i] + kNodeHeight + 12);
      }
    s += "<g class=\"process\"><rect x=\"" + number(left) + "\" y=\"" + number(top) + "\" width=\"" +
         number(right - left) + "\" height=\"" + number(bottom - top) + "\" rx=\"8\"/><text x=\"" +
         number(left + 8) + "\" y=\"" + number(top + 16) + "\">process " + escape(p) + "</text></g>\n";
  }
  for (const GraphEdge& e : g.edges) {
    const double x1 = x[e.from] + kNodeWidth, y1 = y[e.from] + kNodeHeight / 2, x2 = x[e.to],
                 y2 = y[e.to] + kNodeHeight / 2, mid = (x1 + x2) / 2;
    s += "<g class=\"edge\"><path d=\"M" + number(x1) + " " + number(y1) + " C" + number(mid) + " " +
         number(y1) + " " + number(mid) + " " + number(y2) + " " + number(x2 - 6) + " " + number(y2) +
         "\"/><path class=\"head\" d=\"M" + number(x2) + " " + number(y2) + " l-8 -4 v8 z\"/>";
    // Each spec a line, stacked up from just above where the edge crosses the gap's middle.
    std::vector<std::string> specs;
    for (size_t at = 0, comma; at <= e.specs.size(); at = comma + 2) {
      comma = std::min(e.specs.find(", ", at), e.specs.size());
      specs.push_back(e.specs.substr(at, comma - at));
    }
    for (size_t k = 0; k < specs.size(); ++k)
      s += "<text class=\"specs\" x=\"" + number(mid) + "\" y=\"" +
           number((y1 + y2) / 2 - 6 - 12 * static_cast<double>(specs.size() - 1 - k)) + "\">" +
           escape(specs[k]) + "</text>";
    s += "</g>\n";
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    s += "<g class=\"node\"><rect x=\"" + number(x[i]) + "\" y=\"" + number(y[i]) + "\" width=\"" +
         number(kNodeWidth) + "\" height=\"" + number(kNodeHeight) +
         "\" rx=\"6\"/><text class=\"kind\" x=\"" + number(x[i] + kNodeWidth / 2) + "\" y=\"" +
         number(y[i] + 18) + "\">" + escape(g.nodes[i].kind) + "</text><text x=\"" +
         number(x[i] + kNodeWidth / 2) + "\" y=\"" + number(y[i] + 36) + "\">" + escape(g.nodes[i].name) +
         "</text></g>\n";
  return s + "</svg>\n";
}

}  // namespace sluice::tools::report
