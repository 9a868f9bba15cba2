// report.cpp — the toy analysis in the report: the last position's entropy per run.
#include "core/analyses/toy/record.h"
#include "core/report/html.h"

namespace statescope {

std::string report_toy(const std::vector<RunRecord>& runs, const ReportContext&) {
  return per_run(runs, &RunResults::toy, [](size_t, const RunRecord& r, const ToyResult& t) {
    return "<p>" + report::esc(r.name) + ": " + report::fmt(t.entropy.empty() ? 0.0 : t.entropy.back()) + "</p>\n";
  });
}

}  // namespace statescope
