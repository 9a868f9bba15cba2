// report.cpp — effective attention in the report: per run, how strongly its heads read each distance
// back (mean over the layer's heads), and the mean distance read.
#include <sstream>

#include "core/analyses/attention/record.h"
#include "core/report/html.h"
#include "core/report/svg_chart.h"

namespace statescope {

std::string report_attention(const std::vector<RunRecord>& runs, const ReportContext&) {
  using namespace report;
  Chart c{"Effective attention by distance: mean |M[t, t-d]| over t and the layer's heads", "distance d (tokens)",
          "mean |M|", true, {}, {}};
  std::ostringstream t;
  t << "<table><tr><th>run</th><th>layer</th><th>mean distance read (over heads)</th></tr>\n";
  for (size_t ri = 0; ri < runs.size(); ++ri) {
    if (!runs[ri].attention) continue;
    const auto& a = *runs[ri].attention;
    const size_t h = a.heads.size(), L = static_cast<size_t>(a.length);
    ChartSeries s{runs[ri].name, {}, {}, {}, series_color(ri)};
    double mean = 0;
    for (size_t d = 1; d < L; ++d) {
      double v = 0;
      for (size_t i = 0; i < h; ++i) v += a.by_distance[i * L + d] / double(h);
      s.x.push_back(double(d)), s.y.push_back(v);
    }
    for (size_t i = 0; i < h; ++i) mean += mean_distance(a, i) / double(h);
    c.series.push_back(s);
    t << "<tr><td>" << esc(runs[ri].name) << "</td><td>" << a.layer << "</td><td>" << fmt(mean, "%.1f") << "</td></tr>\n";
  }
  t << "</table>\n";
  return charts_with_table("A Mamba-2 head written as attention: M[t, s] = (C_t . B_s) dt_s exp(sum of dt A over "
                           "s &lt; r &lt;= t) is how much position t reads position s, computed exactly from the model's own dt, A, B, C "
                           "on the same sequence for every run. The mean distance weighs each distance by its total |M|.",
                           {&c},t.str());
}

}  // namespace statescope
