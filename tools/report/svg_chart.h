#pragma once
// Charts as inline SVG for `sluice report`: a line chart with axes, ticks
// and a legend (lines, steps, shaded intervals), and a heatmap. Plain
// strings in, one <svg> element out: no script, nothing fetched, so a page
// of them renders anywhere, offline.

#include <optional>
#include <string>
#include <vector>

namespace sluice::tools::report {

struct LineSeries {
  std::string name;
  std::vector<double> x, y;  // equal lengths; NaN y: a gap
  bool step = false;         // held until the next x (a 0/1 truth)
  bool dashed = false;
};

// An interval of x to shade behind the lines (a fault, say).
struct Shade {
  double from, to;
};

struct ChartAxes {
  std::string title;
  std::string x_label, y_label;
  std::optional<double> y_min, y_max;  // else from the data (0 included)
  std::string shade_label;             // the legend's name of the shaded intervals
};

// A line chart of `series` (each its own color); an empty chart says "no data".
std::string line_chart(const ChartAxes& axes, const std::vector<LineSeries>& series,
                       const std::vector<Shade>& shades = {});

struct HeatmapData {
  std::string title, x_label, y_label, value_label;
  std::vector<double> x;  // each column's start; the last one ends at x_end
  double x_end = 0;
  std::vector<std::vector<double>> columns;  // columns[i][row], row 0 at the bottom
  double lo = 0, hi = 1;                     // the color scale's ends (values beyond are clamped)
  // Under the map, a strip of each column's share of something (faults), 0..1; empty: none.
  std::vector<double> strip;
  std::string strip_label;
};

// The cells are drawn as one path per color level, so thousands of cells
// stay a few elements.
std::string heatmap(const HeatmapData& data);

// The color of series `i` (lines, a timeline's nodes): colors that stay
// apart for the color-blind first.
const char* series_color(size_t i);
// Text for HTML and SVG: & < > " escaped.
std::string escape(const std::string& text);

}  // namespace sluice::tools::report
