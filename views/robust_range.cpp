// robust_range.cpp — see robust_range.h.
#include "views/robust_range.h"

#include <algorithm>
#include <cmath>

namespace statescope::views {

std::optional<RobustRange> robust_y_range(const std::vector<std::vector<double>>& series, bool log_scale,
                                          double factor) {
  struct Extent {
    int index;
    double lo, hi;  // in the plotted scale (log10 when log_scale)
  };
  std::vector<Extent> ext;
  for (size_t i = 0; i < series.size(); ++i) {
    double lo = INFINITY, hi = -INFINITY;
    for (double v : series[i]) {
      if (!std::isfinite(v) || (log_scale && v <= 0)) continue;
      const double t = log_scale ? std::log10(v) : v;
      lo = std::min(lo, t), hi = std::max(hi, t);
    }
    if (lo <= hi) ext.push_back({static_cast<int>(i), lo, hi});
  }
  const int n = static_cast<int>(ext.size());
  if (n < 3) return std::nullopt;  // with two curves there is no "the others"
  auto span_without = [&](const std::vector<bool>& out, double& lo, double& hi) {
    lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < n; ++k)
      if (!out[k]) lo = std::min(lo, ext[k].lo), hi = std::max(hi, ext[k].hi);
    return hi - lo;
  };
  std::vector<bool> none(n, false);
  double lo = 0, hi = 0;
  const double full = span_without(none, lo, hi);
  if (!(full > 0)) return std::nullopt;
  // Greedy, fewest first: repeatedly leave out the series that sticks out furthest beyond the others
  // (above or below), for up to a third of them; stop at the first set that shrinks the span enough.
  std::vector<bool> out(n, false);
  for (int removed = 1; removed <= n / 3; ++removed) {
    int best = -1;
    double best_span = INFINITY;
    for (int k = 0; k < n; ++k) {
      if (out[k]) continue;
      out[k] = true;
      double l, h;
      const double s = span_without(out, l, h);
      out[k] = false;
      if (s < best_span) best_span = s, best = k;
    }
    out[best] = true;
    if (best_span > 0 && full / best_span >= factor) {
      RobustRange r;
      span_without(out, r.lo, r.hi);
      if (log_scale) r.lo = std::pow(10.0, r.lo), r.hi = std::pow(10.0, r.hi);
      for (int k = 0; k < n; ++k)
        if (out[k]) r.excluded.push_back(ext[k].index);
      std::sort(r.excluded.begin(), r.excluded.end());
      return r;
    }
  }
  return std::nullopt;
}

}  // namespace statescope::views
