#include "tools/report/svg_chart.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace sluice::tools::report {
namespace {

// The chart's frame in SVG units; the page scales it to its width.
constexpr double kWidth = 960, kHeight = 300;
constexpr double kLeft = 70, kRight = 240, kTop = 34, kBottom = 46;  // the legend sits on the right
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;

// Colors that stay apart for the color-blind (Okabe and Ito), then a few more.
constexpr std::array<const char*, 10> kColors = {"#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7",
                                                 "#56b4e9", "#f0e442", "#000000", "#8c564b", "#7f7f7f"};

}  // namespace

const char* series_color(size_t i) { return kColors[i % kColors.size()]; }

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A tick's label: as few digits as its step needs.
std::string tick_label(double v, double step) {
  if (std::abs(v) < step * 1e-9) v = 0;
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  char buf[32];
  if (std::abs(v) >= 1e6 || (v != 0 && std::abs(v) < 1e-4))
    std::snprintf(buf, sizeof buf, "%.2g", v);
  else
    std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 6), v);
  return buf;
}

// hi, or past lo by a width that lo + width can hold when the span is
// empty (lo + 1 is lo past 2^53).
double widened(double lo, double hi) { return hi > lo ? hi : lo + std::max(1.0, std::abs(lo) * 1e-9); }

// Ticks at 1, 2 or 5 times a power of ten, about `count` of them over [lo, hi].
struct Ticks {
  double lo, hi, step;
};
Ticks nice_ticks(double lo, double hi, int count) {
  // A span that is not finite has no step: tick_values then draws none.
  hi = widened(lo, hi);
  double raw = (hi - lo) / count;
  if (!std::isfinite(raw) || !(raw > 0)) return {lo, hi, std::numeric_limits<double>::infinity()};
  double power = std::pow(10, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power) {
      step = m * power;
      break;
    }
  return {std::floor(lo / step) * step, std::ceil(hi / step) * step, step};
}

// The multiples of `step` in [lo, hi], by count rather than by adding
// `step` until hi: at 1e18 a step of 1 adds nothing, and the loop would
// never end. At most kMaxTicks; none when the step is not finite.
std::vector<double> tick_values(double lo, double hi, double step) {
  constexpr double kMaxTicks = 64;
  std::vector<double> values;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(step) || !(step > 0)) return values;
  const double first = std::ceil(lo / step - 1e-9), last = std::floor(hi / step + 1e-6);
  if (!(last >= first) || last - first >= kMaxTicks) return values;
  for (int k = 0; k <= static_cast<int>(last - first); ++k) values.push_back((first + k) * step);
  return values;
}

struct Frame {
  Ticks x, y;
  double sx(double v) const { return kLeft + (v - x.lo) / (x.hi - x.lo) * kPlotW; }
  double sy(double v) const { return kTop + kPlotH - (v - y.lo) / (y.hi - y.lo) * kPlotH; }
};

std::string open_svg(const std::string& title) {
  return "<svg class=\"chart\" viewBox=\"0 0 " + num(kWidth) + " " + num(kHeight) +
         "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"" + escape(title) +
         "\">\n<text class=\"title\" x=\"" + num(kLeft) + "\" y=\"20\">" + escape(title) + "</text>\n";
}

// Grid, ticks and axis labels.
std::string axes_of(const Frame& f, const std::string& x_label, const std::string& y_label) {
  std::string s = "<g class=\"axes\">\n";
  for (double v : tick_values(f.y.lo, f.y.hi, f.y.step)) {
    s += "<line class=\"grid\" x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + kPlotW) + "\" y1=\"" +
         num(f.sy(v)) + "\" y2=\"" + num(f.sy(v)) + "\"/>";
    s += "<text class=\"tick\" x=\"" + num(kLeft - 6) + "\" y=\"" + num(f.sy(v) + 4) +
         "\" text-anchor=\"end\">" + tick_label(v, f.y.step) + "</text>\n";
  }
  for (double v : tick_values(f.x.lo, f.x.hi, f.x.step)) {
    s += "<line class=\"tickmark\" x1=\"" + num(f.sx(v)) + "\" x2=\"" + num(f.sx(v)) + "\" y1=\"" +
         num(kTop + kPlotH) + "\" y2=\"" + num(kTop + kPlotH + 5) + "\"/>";
    s += "<text class=\"tick\" x=\"" + num(f.sx(v)) + "\" y=\"" + num(kTop + kPlotH + 18) +
         "\" text-anchor=\"middle\">" + tick_label(v, f.x.step) + "</text>\n";
  }
  s += "<rect class=\"frame\" x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(kPlotW) +
       "\" height=\"" + num(kPlotH) + "\"/>\n";
  s += "<text class=\"label\" x=\"" + num(kLeft + kPlotW / 2) + "\" y=\"" + num(kHeight - 8) +
       "\" text-anchor=\"middle\">" + escape(x_label) + "</text>\n";
  s += "<text class=\"label\" transform=\"translate(16 " + num(kTop + kPlotH / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + escape(y_label) + "</text>\n";
  return s + "</g>\n";
}

std::string legend_entry(int row, const std::string& swatch, const std::string& name) {
  const double y = kTop + 8 + row * 18;
  return "<g transform=\"translate(" + num(kLeft + kPlotW + 16) + " " + num(y) + ")\">" + swatch +
         "<text class=\"legend\" x=\"26\" y=\"4\">" + escape(name) + "</text></g>\n";
}

std::string no_data(const std::string& title) {
  return open_svg(title) + "<text class=\"label\" x=\"" + num(kWidth / 2) + "\" y=\"" + num(kHeight / 2) +
         "\" text-anchor=\"middle\">no data</text>\n</svg>\n";
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string line_chart(const ChartAxes& axes, const std::vector<LineSeries>& series,
                       const std::vector<Shade>& shades) {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_lo = 0, y_hi = 0;  // 0 included: a rate or a depth reads from zero
  bool any = false;
  for (const LineSeries& s : series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      any = true;
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.y[i]);
      y_hi = std::max(y_hi, s.y[i]);
    }
  if (!any) return no_data(axes.title);
  if (axes.y_min) y_lo = *axes.y_min;
  if (axes.y_max) y_hi = *axes.y_max;
  // x spans the data exactly (time has no natural zero to round to); y is rounded out to its ticks.
  x_hi = widened(x_lo, x_hi);
  Frame f{{x_lo, x_hi, nice_ticks(x_lo, x_hi, 8).step}, nice_ticks(y_lo, y_hi, 5)};
  if (axes.y_min && axes.y_max) f.y = {*axes.y_min, *axes.y_max, nice_ticks(y_lo, y_hi, 5).step};

  std::string s = open_svg(axes.title);
  s += axes_of(f, axes.x_label, axes.y_label);
  // Ids are the page's: each chart clips to a path of its own.
  static int charts = 0;
  const std::string clip = "plot" + std::to_string(++charts);
  s += "<clipPath id=\"" + clip + "\"><rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" +
       num(kPlotW) + "\" height=\"" + num(kPlotH) + "\"/></clipPath>\n";
  int row = 0;
  if (!shades.empty()) {
    std::string d;
    for (const Shade& sh : shades)
      d += "M" + num(f.sx(sh.from)) + " " + num(kTop) + "H" +
           num(std::max(f.sx(sh.to), f.sx(sh.from) + 0.5)) + "V" + num(kTop + kPlotH) + "H" +
           num(f.sx(sh.from)) + "Z";
    s += "<path class=\"shade\" d=\"" + d + "\"/>\n";
    s += legend_entry(row++, "<rect class=\"shade\" x=\"0\" y=\"-6\" width=\"20\" height=\"12\"/>",
                      axes.shade_label.empty() ? "shaded" : axes.shade_label);
  }
  for (size_t k = 0; k < series.size(); ++k) {
    const LineSeries& ls = series[k];
    const char* color = series_color(k);
    std::string d;
    bool pen_down = false;
    for (size_t i = 0; i < ls.x.size() && i < ls.y.size(); ++i) {
      if (!std::isfinite(ls.x[i]) || !std::isfinite(ls.y[i])) {
        pen_down = false;
        continue;
      }
      const double x = f.sx(ls.x[i]), y = f.sy(ls.y[i]);
      if (!pen_down)
        d += "M" + num(x) + " " + num(y);
      else if (ls.step)
        d += "H" + num(x) + "V" + num(y);
      else
        d += "L" + num(x) + " " + num(y);
      pen_down = true;
    }
    const std::string style =
        std::string("stroke=\"") + color + "\"" + (ls.dashed ? " stroke-dasharray=\"6 4\"" : "");
    s += "<path class=\"series\" clip-path=\"url(#" + clip + ")\" " + style + " d=\"" + d + "\"/>\n";
    s += legend_entry(row++, "<line x1=\"0\" x2=\"20\" y1=\"0\" y2=\"0\" class=\"swatch\" " + style + "/>",
                      ls.name);
  }
  return s + "</svg>\n";
}

std::string heatmap(const HeatmapData& h) {
  if (h.columns.empty() || h.columns[0].empty() || h.x.size() != h.columns.size()) return no_data(h.title);
  const size_t rows = h.columns[0].size();
  const double strip_h = h.strip.empty() ? 0 : 14;
  const double map_h = kPlotH - strip_h - (strip_h > 0 ? 6 : 0);
  Frame f{nice_ticks(h.x.front(), h.x_end, 8), {0, static_cast<double>(rows), 1}};
  f.x.lo = h.x.front();
  f.x.hi = widened(f.x.lo, h.x_end);
  f.x.step = nice_ticks(f.x.lo, f.x.hi, 8).step;

  std::string s = open_svg(h.title);
  // Axes by hand: the rows are bins, labelled every few.
  s += "<g class=\"axes\">\n";
  const double cell_h = map_h / static_cast<double>(rows);
  const size_t every = std::max<size_t>(1, rows / 8);
  for (size_t r = 0; r < rows; r += every)
    s += "<text class=\"tick\" x=\"" + num(kLeft - 6) + "\" y=\"" +
         num(kTop + map_h - (r + 0.5) * cell_h + 4) + "\" text-anchor=\"end\">" + std::to_string(r) +
         "</text>\n";
  for (double v : tick_values(f.x.lo, f.x.hi, f.x.step))
    s += "<text class=\"tick\" x=\"" + num(f.sx(v)) + "\" y=\"" + num(kTop + kPlotH + 18) +
         "\" text-anchor=\"middle\">" + tick_label(v, f.x.step) + "</text>\n";
  s += "<text class=\"label\" x=\"" + num(kLeft + kPlotW / 2) + "\" y=\"" + num(kHeight - 8) +
       "\" text-anchor=\"middle\">" + escape(h.x_label) + "</text>\n";
  s += "<text class=\"label\" transform=\"translate(16 " + num(kTop + map_h / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + escape(h.y_label) + "</text>\n</g>\n";

  // One path per color level: cells of a level are its subpaths.
  constexpr int kLevels = 24;
  auto color = [](double t) {  // viridis, from five of its stops: dark blue, teal, green, yellow
    static constexpr std::array<std::array<double, 3>, 5> kStops = {
        {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};
    const double at = std::clamp(t, 0.0, 1.0) * (kStops.size() - 1);
    const size_t i = std::min(static_cast<size_t>(at), kStops.size() - 2);
    const double u = at - static_cast<double>(i);
    int rgb[3];
    for (size_t k = 0; k < 3; ++k)
      rgb[k] = static_cast<int>(kStops[i][k] + u * (kStops[i + 1][k] - kStops[i][k]));
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
    return std::string(buf);
  };
  // Row by row, a run of neighbouring cells of one level is one rectangle.
  std::vector<std::string> paths(kLevels);
  auto column_x = [&](size_t c) { return f.sx(c < h.x.size() ? h.x[c] : f.x.hi); };
  for (size_t r = 0; r < rows; ++r) {
    const std::string y = num(kTop + map_h - static_cast<double>(r + 1) * cell_h), height = num(cell_h + 0.3);
    int run_level = -1;
    size_t run_from = 0;
    auto close_run = [&](size_t end) {
      if (run_level < 0) return;
      const double x0 = column_x(run_from), x1 = column_x(end);
      const std::string w = num(std::max(x1 - x0, 0.3) + 0.3);  // overlap: no hairline gaps
      paths[static_cast<size_t>(run_level)] +=
          "M" + num(x0) + " " + y + "h" + w + "v" + height + "h-" + w + "Z";
      run_level = -1;
    };
    for (size_t c = 0; c < h.columns.size(); ++c) {
      const double v = r < h.columns[c].size() ? h.columns[c][r] : NAN;
      int level = -1;
      if (std::isfinite(v)) {
        double t = std::clamp((v - h.lo) / (h.hi - h.lo), 0.0, 1.0);
        level = std::min(kLevels - 1, static_cast<int>(t * kLevels));
      }
      if (level != run_level) {
        close_run(c);
        run_level = level;
        run_from = c;
      }
    }
    close_run(h.columns.size());
  }
  for (int l = 0; l < kLevels; ++l)
    if (!paths[static_cast<size_t>(l)].empty())
      s += "<path class=\"cells\" fill=\"" + color((l + 0.5) / kLevels) + "\" d=\"" +
           paths[static_cast<size_t>(l)] + "\"/>\n";
  if (!h.strip.empty()) {
    // The strip: each column's share in red, stronger for more.
    const double y0 = kTop + map_h + 6;
    std::string d;
    for (size_t c = 0; c < h.strip.size() && c < h.x.size(); ++c) {
      if (!(h.strip[c] > 0)) continue;
      const double x0 = f.sx(h.x[c]), x1 = f.sx(c + 1 < h.x.size() ? h.x[c + 1] : f.x.hi);
      const double hh = strip_h * std::min(1.0, h.strip[c]);
      d += "M" + num(x0) + " " + num(y0 + strip_h - hh) + "H" + num(std::max(x1, x0 + 0.5)) + "V" +
           num(y0 + strip_h) + "H" + num(x0) + "Z";
    }
    s += "<rect class=\"frame\" x=\"" + num(kLeft) + "\" y=\"" + num(y0) + "\" width=\"" + num(kPlotW) +
         "\" height=\"" + num(strip_h) + "\"/>\n";
    if (!d.empty()) s += "<path class=\"strip\" d=\"" + d + "\"/>\n";
    s += "<text class=\"tick\" x=\"" + num(kLeft - 6) + "\" y=\"" + num(y0 + strip_h - 2) +
         "\" text-anchor=\"end\">" + escape(h.strip_label) + "</text>\n";
  }
  // The color scale as a legend: a column of the levels with its ends' values.
  const double lx = kLeft + kPlotW + 24, lh = map_h / kLevels;
  for (int l = 0; l < kLevels; ++l)
    s += "<rect x=\"" + num(lx) + "\" y=\"" + num(kTop + map_h - (l + 1) * lh) + "\" width=\"16\" height=\"" +
         num(lh + 0.3) + "\" fill=\"" + color((l + 0.5) / kLevels) + "\"/>";
  s += "\n<text class=\"legend\" x=\"" + num(lx + 22) + "\" y=\"" + num(kTop + 8) + "\">" +
       tick_label(h.hi, 0.1) + "</text><text class=\"legend\" x=\"" + num(lx + 22) + "\" y=\"" +
       num(kTop + map_h) + "\">" + tick_label(h.lo, 0.1) + "</text><text class=\"legend\" x=\"" +
       num(lx + 22) + "\" y=\"" + num(kTop + map_h / 2) + "\">" + escape(h.value_label) + "</text>\n";
  return s + "</svg>\n";
}

}  // namespace sluice::tools::report
