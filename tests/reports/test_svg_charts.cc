// The report's SVG charts: ticks, escaping of every string, hover titles, and the sweep's line chart.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "reports/svg_charts.h"

namespace CS_TEST_FILE {  // unique per file: the tests build in unity batches

using namespace cs::reports;

namespace {

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("nice_ticks covers the range in round steps") {
  CHECK(nice_ticks(0, 10, 5) == std::vector<double>{0, 2, 4, 6, 8, 10});
  CHECK(nice_ticks(0, 12.93, 8) == std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14});
  CHECK(nice_ticks(0, 0.7, 7) == std::vector<double>{0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001,
                                                     0.7000000000000001});
  CHECK(nice_ticks(3, 3, 5) == std::vector<double>{3});  // an empty range: no division by zero
}

TEST_CASE("stacked bars: one segment per non-zero value, each with a title, every string escaped") {
  StackedBars ch;
  ch.title = "step <b>";
  ch.unit = "ms";
  ch.categories = {"compute", "exposed <all-to-all>", "bubble"};
  ch.rows = {"rank 0", "<script>"};
  ch.values = {{10, 2, 0}, {8, 0, 4}};
  ch.limit = 15;
  ch.limit_label = "HBM & more";
  const std::string svg = svg_stacked_bars(ch);
  CHECK(count(svg, "<rect class=\"seg\"") == 4);
  CHECK(count(svg, "<title>") == 4 + 1 + 1 + 3);  // segments, chart, limit, legend items
  CHECK(svg.find("<script>") == std::string::npos);
  CHECK(svg.find("&lt;script&gt;") != std::string::npos);
  CHECK(svg.find("exposed &lt;all-to-all&gt;") != std::string::npos);
  CHECK(svg.find("HBM &amp; more") != std::string::npos);
  CHECK(svg.find("compute: 10 ms (83.3%)") != std::string::npos);
  CHECK(svg_stacked_bars(ch) == svg);  // the same chart, the same bytes
}

TEST_CASE("gantt: a bar per interval with its hover text") {
  Gantt g;
  g.title = "step";
  g.unit = "ms";
  g.end = 10;
  g.categories = {"forward", "all-to-all"};
  g.rows = {{"rank 0 compute", {{0, 4, 0, "fwd \"1\""}, {5, 9, 0, "fwd 2"}}}, {"rank 0 comm", {{4, 5, 1, "a2a"}}}};
  const std::string svg = svg_gantt(g);
  CHECK(count(svg, "height=\"14\"") == 3);  // the bars; the legend has its own rects
  CHECK(svg.find("<title>fwd &quot;1&quot;</title>") != std::string::npos);
  CHECK(svg.find(">rank 0 comm</text>") != std::string::npos);
}

TEST_CASE("line chart of a sweep: a path for the predicted curve, markers for the measured points") {
  LineChart ch;
  ch.title = "SM split";
  ch.x_label = "comm SMs";
  ch.y_label = "step (ms)";
  ch.series = {{"predicted", {{8, 14.2}, {16, 12.4}, {20, 11.9}, {32, 12.8}}, false},
               {"measured", {{8, 14.9}, {20, 12.3}, {24, NAN}}, true}};
  const std::string svg = svg_line_chart(ch);
  CHECK(count(svg, "<path ") == 1);
  CHECK(count(svg, "<circle ") == 4 + 2);  // the NaN point is left out
  CHECK(svg.find("<title>measured: comm SMs = 20, step (ms) = 12.3</title>") != std::string::npos);
  CHECK(svg.find(">comm SMs</text>") != std::string::npos);
  CHECK(svg.find("NaN") == std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
}

}  // namespace CS_TEST_FILE
