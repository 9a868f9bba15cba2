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
  Chart common{"The same states outside one envelope for every run (the loaded model's zero-state training states)",
               "position (tokens)", "fraction outside", true, {}, {{double(ctx.T), "T"}}};
  t << "<table><tr><th>run</th><th>held-out outside</th><th>Spearman with excess (95%)</th>"
       "<th>outside the common envelope, last position</th><th>its Spearman with excess (95%)</th></tr>\n";
  bool any = false;
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    const auto& r = runs[ri];
    if (!r.unexplored) continue;
    any = true;
    const auto& u = *r.unexplored;
    ChartSeries s{r.name, {}, {}, {}, series_color(ri)};
    for (size_t j = 0; j < u.positions.size(); ++j) s.x.push_back(double(u.positions[j] + 1)), s.y.push_back(u.outside_mean[j]);
    c.series.push_back(s);
    if (!u.common_outside_mean.empty()) {
      ChartSeries cs{r.name, {}, {}, {}, series_color(ri)};
      for (size_t j = 0; j < u.positions.size(); ++j)
        cs.x.push_back(double(u.positions[j] + 1)), cs.y.push_back(u.common_outside_mean[j]);
      common.series.push_back(cs);
    }
    double held = 0;
    for (double h : u.heldout_outside) held += h / double(u.heldout_outside.size());
    t << "<tr><td>" << esc(r.name) << "</td><td>" << fmt(held) << "</td><td>" << fmt(u.excess_rho, "%.2f") << " ["
      << fmt(u.excess_rho_lo, "%.2f") << ", " << fmt(u.excess_rho_hi, "%.2f") << "]</td>";
    if (u.common_outside_mean.empty()) t << "<td>-</td><td>-</td></tr>\n";
    else
      t << "<td>" << fmt(u.common_outside_mean.back()) << "</td><td>" << fmt(u.common_rho, "%.2f") << " ["
        << fmt(u.common_rho_lo, "%.2f") << ", " << fmt(u.common_rho_hi, "%.2f") << "]</td></tr>\n";
  }
  if (!any) return "";
  t << "</table>\n";
  return charts_with_table("The fraction of evaluation states outside the envelope of the states each run met in "
                           "training (training windows replayed under its own policy; PCA envelope per layer and head at the 99th "
                           "percentile of held-out training states, so about 0.01 of training states fall outside). A run's own "
                           "envelope moves with its policy (state passing's holds passed states), so the second chart scores the "
                           "same states against one envelope for every run: the loaded model's zero-state training states. The "
                           "excess is against the experiment's one yardstick.",
                           {&c, &common},t.str());
}

}  // namespace statescope
