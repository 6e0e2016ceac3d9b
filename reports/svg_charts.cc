#include "reports/svg_charts.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "reports/html_escape.h"

namespace cs::reports {

namespace {

constexpr double kWidth = 960;      // viewBox width; the page scales it to the column
constexpr double kLeft = 150;       // room for row labels
constexpr double kRight = 24;
constexpr double kRowHeight = 22;
constexpr double kBarHeight = 15;
constexpr double kLegendRow = 18;

// Coordinates with one decimal: enough for a screen, and stable bytes.
std::string c(double v) { return fmt::format("{:.1f}", v); }

// Tick labels with as many decimals as the tick step needs.
std::string tick_label(double v, double step) {
  const int decimals = step > 0 ? std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 6) : 0;
  std::string s = fmt::format("{:.{}f}", v, decimals);
  return s == "-0" ? "0" : s;
}

// The legend, wrapped over as many lines as it needs; returns the height used.
double legend(std::string& svg, const std::vector<std::string>& categories, double y, bool lines = false) {
  double x = kLeft;
  double height = kLegendRow;
  for (size_t i = 0; i < categories.size(); ++i) {
    const double w = 26 + 7.0 * static_cast<double>(categories[i].size());
    if (x + w > kWidth - kRight && x > kLeft) {
      x = kLeft;
      y += kLegendRow;
      height += kLegendRow;
    }
    const std::string name = html_escape(categories[i]);
    svg += "<g class=\"legend-item\"><title>" + name + "</title>";
    if (lines)
      svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"/>", c(x),
                         c(y + 6), c(x + 14), c(y + 6), chart_color(static_cast<int>(i)));
    else
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>", c(x), c(y),
                         chart_color(static_cast<int>(i)));
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text></g>", c(x + 17), c(y + 10), name);
    x += w;
  }
  return height;
}

// A vertical-gridded horizontal value axis at `y` over [0, max]; returns the x of a value.
struct Axis {
  double lo = 0, hi = 1;
  double x(double v) const { return kLeft + (v - lo) / (hi - lo) * (kWidth - kLeft - kRight); }
};

Axis x_axis(std::string& svg, double max_value, double top, double bottom, const std::string& unit) {
  const std::vector<double> ticks = nice_ticks(0, max_value > 0 ? max_value : 1, 8);
  Axis a{0, std::max(ticks.back(), max_value > 0 ? max_value : 1)};
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  svg += "<g class=\"axis\">";
  for (double t : ticks) {
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" class=\"grid\"/>", c(a.x(t)), c(top),
                       c(bottom));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", c(a.x(t)), c(bottom + 14),
                       tick_label(t, step));
  }
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"baseline\"/>", c(kLeft), c(bottom),
                     c(kWidth - kRight));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text></g>", c(kWidth - kRight), c(bottom + 30),
                     html_escape(unit));
  return a;
}

std::string open_svg(double height, const std::string& title, const std::string& cls) {
  return fmt::format("<svg class=\"chart {}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\" "
                     "xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>",
                     cls, c(kWidth), c(height), html_escape(title), html_escape(title));
}

}  // namespace

std::string chart_color(int i) {
  static const char* const kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
                                         "#B8A200", "#999999", "#4E79A7", "#F28E2B", "#59A14F", "#B07AA1",
                                         "#76B7B2", "#FF9DA7", "#9C755F", "#BAB0AC"};
  constexpr int n = static_cast<int>(std::size(kPalette));
  return kPalette[((i % n) + n) % n];
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (int i = 0; i < 1000; ++i) {
    const double t = first + i * step;
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string svg_stacked_bars(const StackedBars& ch) {
  double max_total = ch.limit;
  for (const auto& row : ch.values) {
    double total = 0;
    for (double v : row) total += std::max(0.0, v);
    max_total = std::max(max_total, total);
  }
  const double top = ch.limit > 0 ? 22 : 8;  // room for the limit's label above the bars
  const double bottom = top + kRowHeight * static_cast<double>(ch.rows.size()) + 4;
  std::string body;
  const Axis a = x_axis(body, max_total, top, bottom, ch.unit);
  for (size_t r = 0; r < ch.rows.size(); ++r) {
    const double y = top + kRowHeight * static_cast<double>(r) + (kRowHeight - kBarHeight) / 2;
    const std::string row = html_escape(ch.rows[r]);
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"row-label\">{}</text>", c(kLeft - 6),
                        c(y + 11.5), row);
    double at = 0, total = 0;
    for (double v : ch.values[r]) total += std::max(0.0, v);
    for (size_t k = 0; k < ch.categories.size() && k < ch.values[r].size(); ++k) {
      const double v = std::max(0.0, ch.values[r][k]);
      if (v <= 0) continue;
      const double pct = total > 0 ? 100 * v / total : 0;
      body += fmt::format("<rect class=\"seg\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}: {} — "
                          "{}: {} {} ({:.1f}%)</title></rect>",
                          c(a.x(at)), c(y), c(std::max(0.3, a.x(at + v) - a.x(at))), c(kBarHeight),
                          chart_color(static_cast<int>(k)), html_escape(ch.title), row,
                          html_escape(ch.categories[k]), fmt::format("{:.4g}", v), html_escape(ch.unit), pct);
      at += v;
    }
  }
  if (ch.limit > 0) {
    body += fmt::format("<line class=\"limit\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"><title>{3}</title></line>",
                        c(a.x(ch.limit)), c(top - 4), c(bottom), html_escape(ch.limit_label));
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"limit-label\">{}</text>",
                        c(a.x(ch.limit) - 3), c(top - 8), html_escape(ch.limit_label));
  }
  std::string leg;
  const double legend_h = legend(leg, ch.categories, bottom + 40);
  return open_svg(bottom + 40 + legend_h + 4, ch.title, "bars") + body + leg + "</svg>";
}

std::string svg_gantt(const Gantt& ch) {
  const double top = 8;
  const double row_h = 20;
  const double bottom = top + row_h * static_cast<double>(ch.rows.size()) + 4;
  std::string body;
  const Axis a = x_axis(body, ch.end, top, bottom, ch.unit);
  for (size_t r = 0; r < ch.rows.size(); ++r) {
    const double y = top + row_h * static_cast<double>(r) + 3;
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"row-label\">{}</text>", c(kLeft - 6),
                        c(y + 11), html_escape(ch.rows[r].label));
    body += "<g class=\"track\">";
    for (const GanttBar& b : ch.rows[r].bars) {
      const double x0 = a.x(b.start), x1 = a.x(b.end);
      body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"{}\"><title>{}</title></rect>", c(x0),
                          c(y), c(std::max(0.3, x1 - x0)), chart_color(b.category), html_escape(b.title));
    }
    body += "</g>";
  }
  std::string leg;
  const double legend_h = legend(leg, ch.categories, bottom + 40);
  return open_svg(bottom + 40 + legend_h + 4, ch.title, "gantt") + body + leg + "</svg>";
}

std::string svg_line_chart(const LineChart& ch) {
  double x_lo = 0, x_hi = 0, y_hi = 0;
  bool any = false;
  for (const auto& s : ch.series)
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      x_lo = any ? std::min(x_lo, x) : x;
      x_hi = any ? std::max(x_hi, x) : x;
      y_hi = std::max(y_hi, y);
      any = true;
    }
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  if (y_hi <= 0) y_hi = 1;
  const double top = 10, bottom = 270, left = kLeft - 60;
  const std::vector<double> xt = nice_ticks(x_lo, x_hi, 8), yt = nice_ticks(0, y_hi, 6);
  const double x_step = xt.size() > 1 ? xt[1] - xt[0] : 1, y_step = yt.size() > 1 ? yt[1] - yt[0] : 1;
  const double xa = std::min(xt.front(), x_lo), xb = std::max(xt.back(), x_hi), yb = std::max(yt.back(), y_hi);
  const auto px = [&](double x) { return left + (x - xa) / (xb - xa) * (kWidth - left - kRight); };
  const auto py = [&](double y) { return bottom - y / yb * (bottom - top); };
  std::string body = "<g class=\"axis\">";
  for (double t : yt) {
    body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"grid\"/>", c(left), c(py(t)),
                        c(kWidth - kRight));
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", c(left - 5), c(py(t) + 4),
                        tick_label(t, y_step));
  }
  for (double t : xt) {
    if (t < xa - 1e-12 || t > xb + 1e-12) continue;
    body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" class=\"grid\"/>", c(px(t)), c(top),
                        c(bottom));
    body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", c(px(t)), c(bottom + 14),
                        tick_label(t, x_step));
  }
  body += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" class=\"baseline\"/>", c(left), c(bottom),
                      c(kWidth - kRight));
  body += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", c((left + kWidth - kRight) / 2),
                      c(bottom + 32), html_escape(ch.x_label));
  body += fmt::format("<text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text></g>",
                      c((top + bottom) / 2), html_escape(ch.y_label));
  for (size_t i = 0; i < ch.series.size(); ++i) {
    const LineSeries& s = ch.series[i];
    const std::string color = chart_color(static_cast<int>(i));
    std::string path;
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      path += (path.empty() ? "M" : " L") + c(px(x)) + " " + c(py(y));
    }
    body += "<g class=\"series\">";
    if (!s.markers_only && !path.empty())
      body += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>", path, color);
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      body += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"><title>{}: {} = {:.4g}, {} = {:.4g}</title>"
                          "</circle>",
                          c(px(x)), c(py(y)), s.markers_only ? "4" : "3", color, html_escape(s.name),
                          html_escape(ch.x_label), x, html_escape(ch.y_label), y);
    }
    body += "</g>";
  }
  std::vector<std::string> names;
  for (const auto& s : ch.series) names.push_back(s.name);
  std::string leg;
  const double legend_h = legend(leg, names, bottom + 42, true);
  return open_svg(bottom + 42 + legend_h + 4, ch.title, "lines") + body + leg + "</svg>";
}

}  // namespace cs::reports
