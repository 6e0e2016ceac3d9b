// Inline SVG charts for the HTML report: axes with ticks, legends, and a hover <title> on every
// mark. Every string given here is escaped (reports/html_escape.h); numbers are printed with a
// fixed precision, so the same chart gives the same bytes.
#pragma once

#include <string>
#include <vector>

namespace cs::reports {

// A colour for the i-th category, from a fixed palette readable in print and by most colour-blind
// readers (Okabe-Ito, its yellow darkened to show on white, then Tableau).
std::string chart_color(int i);

// About `target` round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of ten).
std::vector<double> nice_ticks(double lo, double hi, int target);

// One horizontal bar per row, split into one segment per category.
struct StackedBars {
  std::string title;                        // the chart's accessible name
  std::string unit;                         // of the value axis, e.g. "ms"
  std::vector<std::string> categories;      // legend order
  std::vector<std::string> rows;            // bar labels, top to bottom
  std::vector<std::vector<double>> values;  // [row][category], >= 0
  double limit = 0;                         // > 0: a marker line at this value (e.g. HBM capacity)
  std::string limit_label;
};
std::string svg_stacked_bars(const StackedBars& chart);

// A Gantt chart: rows of time intervals, each interval coloured by its category.
struct GanttBar {
  double start = 0, end = 0;
  int category = 0;
  std::string title;  // hover text
};
struct GanttRow {
  std::string label;
  std::vector<GanttBar> bars;
};
struct Gantt {
  std::string title;
  std::string unit;  // of the time axis
  double end = 0;    // the axis runs from 0 to end
  std::vector<std::string> categories;
  std::vector<GanttRow> rows;
};
std::string svg_gantt(const Gantt& chart);

// Lines through (x, y) points, one per series; a series may be drawn as points only (measured
// values beside a predicted curve).
struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), in x order
  bool markers_only = false;
};
struct LineChart {
  std::string title;
  std::string x_label, y_label;
  std::vector<LineSeries> series;
};
std::string svg_line_chart(const LineChart& chart);

}  // namespace cs::reports
