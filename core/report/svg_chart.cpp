// svg_chart.cpp — line charts as SVG text (see svg_chart.h).
#include "core/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace statescope::report {
namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string tick_text(double v) {
  char b[32];
  if (std::fabs(v) >= 1e4 || (std::fabs(v) < 1e-3 && v != 0)) std::snprintf(b, sizeof b, "%.0e", v);
  else std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// About n "nice" ticks over [lo, hi].
std::vector<double> linear_ticks(double lo, double hi, int n) {
  const double span = hi - lo, raw = span / n, mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5 ? mag : raw / mag < 3 ? 2 * mag : raw / mag < 7 ? 5 * mag : 10 * mag;
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * span; v += step) t.push_back(std::fabs(v) < 1e-12 * step ? 0 : v);
  return t;
}

}  // namespace

std::string series_color(size_t i) {
  static const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kColors[i % 10];
}

std::string charts_with_table(const std::string& note, std::initializer_list<const Chart*> charts,
                              const std::string& table) {
  if (charts.size() == 0 || (*charts.begin())->series.empty()) return "";
  std::string out = "<p class=\"note\">" + note + "</p>\n";
  for (const Chart* c : charts)
    if (!c->series.empty()) out += render_svg(*c);
  return out + table;
}

std::string render_svg(const Chart& c, int W, int H) {
  const double L = 70, R = 170, T = 30, B = 45;  // margins: the legend sits right
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  auto fx = [&](double x) { return c.log_x ? std::log10(x) : x; };
  for (const auto& s : c.series)
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (c.log_x && s.x[i] <= 0)) continue;
      const double e = i < s.err.size() && std::isfinite(s.err[i]) ? s.err[i] : 0;
      x0 = std::min(x0, fx(s.x[i])), x1 = std::max(x1, fx(s.x[i]));
      y0 = std::min(y0, s.y[i] - e), y1 = std::max(y1, s.y[i] + e);
    }
  std::ostringstream o;
  o << "<svg class=\"chart\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W << " " << H
    << "\" role=\"img\" aria-label=\"" << esc(c.title) << "\">\n";
  o << "<text x=\"" << W / 2 << "\" y=\"18\" text-anchor=\"middle\" font-weight=\"bold\" font-size=\"14\">"
    << esc(c.title) << "</text>\n";
  if (!std::isfinite(x0)) {
    o << "<text x=\"" << W / 2 << "\" y=\"" << H / 2 << "\" text-anchor=\"middle\" fill=\"#888\">no data</text></svg>\n";
    return o.str();
  }
  if (x1 == x0) x0 -= 0.5, x1 += 0.5;
  if (y1 == y0) y0 -= 0.5, y1 += 0.5;
  const double pad = 0.05 * (y1 - y0);
  y0 -= pad, y1 += pad;
  auto px = [&](double x) { return L + (fx(x) - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
  // frame, grid, ticks
  o << "<rect x=\"" << L << "\" y=\"" << T << "\" width=\"" << W - L - R << "\" height=\"" << H - T - B
    << "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (double v : linear_ticks(y0, y1, 5))
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << num(py(v)) << "\" y2=\"" << num(py(v))
      << "\" stroke=\"#e4e4e4\"/><text x=\"" << L - 6 << "\" y=\"" << num(py(v) + 4)
      << "\" text-anchor=\"end\" font-size=\"11\">" << tick_text(v) << "</text>\n";
  std::vector<double> xt;
  if (c.log_x)
    for (double d = std::pow(10.0, std::floor(x0)); d <= std::pow(10.0, x1) * 1.0001; d *= 10)
      for (double m : {1.0, 2.0, 5.0})
        if (const double v = d * m; std::log10(v) >= x0 - 1e-9 && std::log10(v) <= x1 + 1e-9) xt.push_back(v);
  if (!c.log_x || xt.size() < 2) {
    xt = linear_ticks(c.log_x ? std::pow(10.0, x0) : x0, c.log_x ? std::pow(10.0, x1) : x1, 6);
    if (c.log_x) xt.erase(std::remove_if(xt.begin(), xt.end(), [](double v) { return v <= 0; }), xt.end());
  }
  for (double v : xt)
    o << "<line x1=\"" << num(px(v)) << "\" x2=\"" << num(px(v)) << "\" y1=\"" << T << "\" y2=\"" << H - B
      << "\" stroke=\"#f0f0f0\"/><text x=\"" << num(px(v)) << "\" y=\"" << H - B + 15
      << "\" text-anchor=\"middle\" font-size=\"11\">" << tick_text(v) << "</text>\n";
  if (y0 < 0 && y1 > 0)
    o << "<line x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << num(py(0)) << "\" y2=\"" << num(py(0))
      << "\" stroke=\"#777\"/>\n";
  for (const auto& [x, label] : c.markers) {
    if (c.log_x && x <= 0) continue;
    if (fx(x) < x0 || fx(x) > x1) continue;
    o << "<line x1=\"" << num(px(x)) << "\" x2=\"" << num(px(x)) << "\" y1=\"" << T << "\" y2=\"" << H - B
      << "\" stroke=\"#555\" stroke-dasharray=\"4 3\"/><text x=\"" << num(px(x) + 4) << "\" y=\"" << T + 12
      << "\" font-size=\"11\" fill=\"#555\">" << esc(label) << "</text>\n";
  }
  o << "<text x=\"" << (L + W - R) / 2 << "\" y=\"" << H - 8 << "\" text-anchor=\"middle\" font-size=\"12\">"
    << esc(c.x_label) << (c.log_x ? " (log scale)" : "") << "</text>\n";
  o << "<text transform=\"translate(16," << (T + H - B) / 2 << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">"
    << esc(c.y_label) << "</text>\n";
  // series: band, line, legend entry
  for (size_t k = 0; k < c.series.size(); ++k) {
    const auto& s = c.series[k];
    const std::string col = s.color.empty() ? series_color(k) : s.color;
    std::ostringstream line, upper, lower;
    size_t n = 0;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (c.log_x && s.x[i] <= 0)) continue;
      line << (n++ ? " " : "") << num(px(s.x[i])) << "," << num(py(s.y[i]));
      if (!s.err.empty()) {
        const double e = i < s.err.size() && std::isfinite(s.err[i]) ? s.err[i] : 0;
        upper << num(px(s.x[i])) << "," << num(py(s.y[i] + e)) << " ";
        lower.str(num(px(s.x[i])) + "," + num(py(s.y[i] - e)) + " " + lower.str());
      }
    }
    if (!s.err.empty() && n > 0)
      o << "<polygon points=\"" << upper.str() << lower.str() << "\" fill=\"" << col << "\" fill-opacity=\"0.18\" stroke=\"none\"/>\n";
    if (n == 1) {
      const auto p = line.str();
      const auto comma = p.find(',');
      o << "<circle cx=\"" << p.substr(0, comma) << "\" cy=\"" << p.substr(comma + 1) << "\" r=\"3\" fill=\"" << col << "\"/>\n";
    } else if (n > 1) {
      o << "<polyline points=\"" << line.str() << "\" fill=\"none\" stroke=\"" << col << "\" stroke-width=\"1.5\"/>\n";
    }
    const double ly = T + 8 + 16.0 * static_cast<double>(k);
    o << "<line x1=\"" << W - R + 10 << "\" x2=\"" << W - R + 30 << "\" y1=\"" << num(ly) << "\" y2=\"" << num(ly)
      << "\" stroke=\"" << col << "\" stroke-width=\"2\"/><text x=\"" << W - R + 35 << "\" y=\"" << num(ly + 4)
      << "\" font-size=\"11\">" << esc(s.name.size() > 24 ? s.name.substr(0, 23) + "…" : s.name) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace statescope::report
