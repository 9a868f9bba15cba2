// report.cpp — the unexplored-states detector in the report: the fraction outside the envelope per
// position, one colour per run, and each run's held-out rate and Spearman correlation with the excess.
#include <sstream>

#include "core/analyses/unexplored/record.h"
#include "core/report/html.h"
#include "core/report/svg_chart.h"

namespace statescope {

std::string report_unexplored(const std::vector<RunRecord>& runs, const ReportContext& ctx) {
  using namespace report;
  Chart c{"States outside the envelope of the run's training states", "position (tokens)", "fraction outside", true, {},
          {{double(ctx.T), "T"}}};
  std::ostringstream t;
  t << "<table><tr><th>run</th><th>held-out outside</th><th>Spearman with excess (95%)</th></tr>\n";
  bool any = false;
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    const auto& r = runs[ri];
    if (!r.unexplored) continue;
    any = true;
    const auto& u = *r.unexplored;
    ChartSeries s{r.name, {}, {}, {}, series_color(ri)};
    for (size_t j = 0; j < u.positions.size(); ++j) s.x.push_back(double(u.positions[j] + 1)), s.y.push_back(u.outside_mean[j]);
    c.series.push_back(s);
    double held = 0;
    for (double h : u.heldout_outside) held += h / double(u.heldout_outside.size());
    t << "<tr><td>" << esc(r.name) << "</td><td>" << fmt(held) << "</td><td>" << fmt(u.excess_rho, "%.2f") << " ["
      << fmt(u.excess_rho_lo, "%.2f") << ", " << fmt(u.excess_rho_hi, "%.2f") << "]</td></tr>\n";
  }
  if (!any) return "";
  t << "</table>\n";
  return "<p class=\"note\">The fraction of evaluation states outside the envelope of the states each run met in "
         "training (training windows replayed under its own policy; PCA envelope per layer and head at the 99th "
         "percentile of held-out training states, so about 0.01 of training states fall outside).</p>\n" +
         render_svg(c) + t.str();
}

}  // namespace statescope
