// report.cpp — decay timescales in the report: per run, the memory-length distribution pooled over
// layers and groups within T and far past it, and the medians.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/analyses/decay/record.h"
#include "core/report/html.h"
#include "core/report/svg_chart.h"

namespace statescope {

std::string report_decay(const std::vector<RunRecord>& runs, const ReportContext&) {
  using namespace report;
  Chart c{"Memory length -1/(dt A), all layers and groups (solid: within T; far: past max(T, length/2))",
          "memory length (tokens)", "fraction of tokens", true, {}, {}};
  std::ostringstream t;
  t << "<table><tr><th>run</th><th>median within T</th><th>median far</th></tr>\n";
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    if (!runs[ri].decay) continue;
    const auto& d = *runs[ri].decay;
    const size_t nb = d.bin_edges.size() - 1, cells = d.median_far.size();
    const auto [first, last] = occupied_bins(d);
    for (auto [label, h] : {std::pair{" within T", &d.near}, {" far", &d.far}}) {
      ChartSeries s{runs[ri].name + label, {}, {}, {}, series_color(ri)};
      for (size_t k = first; k <= last; ++k) {
        double v = 0;
        for (size_t i = 0; i < cells; ++i) v += (*h)[i * nb + k] / double(cells);
        s.x.push_back(std::pow(10.0, 0.5 * (d.bin_edges[k] + d.bin_edges[k + 1]))), s.y.push_back(v);
      }
      c.series.push_back(s);
    }
    t << "<tr><td>" << esc(runs[ri].name) << "</td><td>" << fmt(median_of(d.median_near), "%.3g") << "</td><td>"
      << fmt(median_of(d.median_far), "%.3g") << "</td></tr>\n";
  }
  t << "</table>\n";
  return charts_with_table("How long each state group remembers: the memory length -1/(dt_t A) is the number of "
                           "tokens over which the state decays by 1/e at token t (mean of dt_t A over the group). Medians: the "
                           "middle of the per-(layer, group) medians.",
                           {&c},t.str());
}

}  // namespace statescope
