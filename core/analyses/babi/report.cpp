// report.cpp — bAbI-style questions in the report: per run, accuracy by length beside the
// last-mentioned baseline.
#include <sstream>

#include "core/analyses/babi/record.h"
#include "core/report/html.h"

namespace statescope {

std::string report_babi(const std::vector<RunRecord>& runs, const ReportContext&) {
  return per_run(runs, &RunResults::babi, [](size_t, const RunRecord& r, const BabiResult& b) {
    using namespace report;
    std::ostringstream t;
    t << "<h3>" << esc(r.name) << " (" << b.samples << " questions per length)</h3><table><tr><th>length</th>"
      << "<th>greedy</th><th>choice</th><th>last-mentioned baseline</th></tr>\n";
    for (size_t i = 0; i < b.lengths.size(); ++i)
      t << "<tr><td>" << b.lengths[i] << "</td><td>" << fmt(b.accuracy[i], "%.2f") << "</td><td>"
        << fmt(b.choice_accuracy[i], "%.2f") << "</td><td>"
        << (i < b.last_mentioned_accuracy.size() ? fmt(b.last_mentioned_accuracy[i], "%.2f") : "–") << "</td></tr>\n";
    t << "</table>\n";
    return t.str();
  });
}

}  // namespace statescope
