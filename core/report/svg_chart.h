// svg_chart.h — a line chart as inline SVG text, for reports that other people open without
// statescope (no Qt, no LibTorch, no script, no network): axes with ticks, linear or log x, lines
// with an optional error band, vertical markers (T), a legend.
#pragma once
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace statescope::report {

struct ChartSeries {
  std::string name;
  std::vector<double> x, y;
  std::vector<double> err;  // empty, or a half-width per point (drawn as a band)
  std::string color;        // "" = series_color(index in the chart)
};

struct Chart {
  std::string title, x_label, y_label;
  bool log_x = false;
  std::vector<ChartSeries> series;
  std::vector<std::pair<double, std::string>> markers;  // vertical lines at x, labelled
};

// The chart as an <svg> element (width x height pixels). Non-finite points are skipped; a chart
// without any finite point says so in its body.
std::string render_svg(const Chart& c, int width = 760, int height = 340);

// A report section's body built on charts: the note (a sentence or two of HTML) above the charts,
// the table below them; "" when the first chart has no series (no run holds the result).
std::string charts_with_table(const std::string& note, std::initializer_list<const Chart*> charts,
                              const std::string& table);

// The colour of series i (the app's palette, readable on white).
std::string series_color(size_t i);

}  // namespace statescope::report
