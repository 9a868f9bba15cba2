// report.cpp — state statistics in the report: the std of the state entries per position (first
// listed layer, mean over heads) and the Gaussian fitted at T-1.
#include <sstream>

#include "core/analyses/states/record.h"
#include "core/report/html.h"

namespace statescope {

std::string report_state_stats(const std::vector<RunRecord>& runs, const ReportContext&) {
  using namespace report;
  const std::string tables = per_run(runs, &RunResults::states, [](size_t, const RunRecord& r, const StateStatsResult& st) {
    if (st.layers.empty()) return std::string();  // the fit is the first layer's
    std::ostringstream t;
    const size_t H = size_t(st.nheads), np = st.positions.size();
    double fit = 0;
    for (size_t h = 0; h < H; ++h) fit += st.fitted_std[h] / double(H);
    t << "<h3>" << esc(r.name) << "</h3><table><tr><th>position</th>";
    for (auto p : st.positions) t << "<th>" << p << "</th>";
    t << "<th>fit at T-1</th></tr><tr><td>std (layer " << (st.layers.empty() ? 0 : st.layers[0]) << ")</td>";
    for (size_t k = 0; k < np; ++k) {
      double v = 0;
      for (size_t h = 0; h < H; ++h) v += st.std[k * H + h] / double(H);
      t << "<td>" << fmt(v, "%.4f") << "</td>";
    }
    t << "<td>" << fmt(fit, "%.4f") << "</td></tr></table>\n";
    return t.str();
  });
  if (tables.empty()) return "";
  return "<p class=\"note\">Standard deviation of the SSM state entries at each position (first listed layer, mean "
         "over heads) and the Gaussian fitted at T-1 (what fitted noise draws from).</p>\n" + tables;
}

}  // namespace statescope
