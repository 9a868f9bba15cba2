// html.cpp — see html.h.
#include "core/report/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace statescope::report {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : std::string(1, c);
  return o;
}

std::string fmt(double v, const char* f) {
  if (!std::isfinite(v)) return "–";
  char b[48];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section id=\"" + id + "\"><h2>" + esc(title) + "</h2>\n" + body + "</section>\n";
}

void log_binned(const std::vector<double>& v, std::vector<double>& x, std::vector<double>& y, int n) {
  const double L = static_cast<double>(v.size());
  size_t a = 0;
  for (int k = 1; k <= n && a < v.size(); ++k) {
    const size_t b = std::max(a + 1, static_cast<size_t>(std::ceil(std::pow(L, static_cast<double>(k) / n))));
    double s = 0;
    for (size_t i = a; i < b && i < v.size(); ++i) s += v[i];
    const size_t e = std::min(b, v.size());
    x.push_back(0.5 * static_cast<double>(a + 1 + e));  // positions are 1-based on the axis
    y.push_back(s / static_cast<double>(e - a));
    a = e;
  }
}

}  // namespace statescope::report
