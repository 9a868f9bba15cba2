// report.cpp — Effective Remembrance in the report: one chart per run, a line per context length T.
#include "core/analyses/effrem/record.h"
#include "core/report/html.h"
#include "core/report/svg_chart.h"

namespace statescope {

std::string report_effrem(const std::vector<RunRecord>& runs, const ReportContext&) {
  using namespace report;
  const std::string body = per_run(runs, &RunResults::effrem, [](size_t, const RunRecord& r, const EffRemResult& e) {
    Chart c{"Effective Remembrance: " + r.name, "t (tokens dropped from the start)", "EffRem_T(t)", false, {}, {}};
    for (size_t i = 0; i < e.T.size(); ++i) {
      ChartSeries s{"T = " + std::to_string(e.T[i]), {}, {}, {}, ""};
      for (size_t j = 0; j < e.t.size(); ++j) {
        s.x.push_back(double(e.t[j])), s.y.push_back(e.value[i * e.t.size() + j]);
        s.err.push_back(e.stderr_[i * e.t.size() + j]);
      }
      c.series.push_back(s);
    }
    return render_svg(c);
  });
  if (body.empty()) return "";
  return "<p class=\"note\">EffRem_T(t) = TV(p(.|x[0:T]), p(.|x[t:T])): how much the tokens before t still change "
         "the prediction at T (1: everything, 0: nothing), mean over sequences.</p>\n" + body;
}

}  // namespace statescope
