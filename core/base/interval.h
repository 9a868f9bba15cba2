// interval.h — a mean over independent repeats (seeds) with its 95% confidence interval from
// Student's t distribution: what every "3 seeds" figure in statescope reports. Header only; no
// LibTorch, no Qt.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace statescope {

// The 0.975 quantile of Student's t with `df` degrees of freedom (df >= 1; exact to the printed
// digits up to 30, 1.96 beyond: the normal limit, within 2% from 30 on).
inline double t_quantile_975(size_t df) {
  static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                             2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                             2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return NAN;
  return df <= 30 ? t[df - 1] : 1.96;
}

struct MeanInterval {
  double mean = NAN;
  double half = NAN;  // the 95% interval is mean +- half; NaN with fewer than two repeats
  double lo = NAN, hi = NAN;  // the smallest and largest repeat
  size_t n = 0;
};

// Mean, 95% t-interval (sample standard deviation / sqrt(n) x t_{0.975, n-1}), min and max of `v`.
inline MeanInterval mean_interval(const std::vector<double>& v) {
  MeanInterval m;
  m.n = v.size();
  if (v.empty()) return m;
  double s = 0;
  m.lo = m.hi = v[0];
  for (double x : v) s += x, m.lo = std::fmin(m.lo, x), m.hi = std::fmax(m.hi, x);
  m.mean = s / static_cast<double>(v.size());
  if (v.size() < 2) return m;
  double ss = 0;
  for (double x : v) ss += (x - m.mean) * (x - m.mean);
  const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  m.half = t_quantile_975(v.size() - 1) * sd / std::sqrt(static_cast<double>(v.size()));
  return m;
}

}  // namespace statescope
