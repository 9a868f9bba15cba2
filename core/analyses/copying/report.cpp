// report.cpp — synthetic copying in the report: per run, exact match by length from a zero state and,
// when measured, from a passed state and from foreign states (prose, noise, another task's).
#include <sstream>

#include "core/analyses/copying/record.h"
#include "core/report/html.h"

namespace statescope {

std::string report_copying(const std::vector<RunRecord>& runs, const ReportContext&) {
  return per_run(runs, &RunResults::copying, [](size_t, const RunRecord& r, const CopyResult& c) {
    using namespace report;
    std::ostringstream t;
    t << "<h3>" << esc(r.name) << " (exact match; L = " << c.L << ")</h3><table><tr><th>length</th><th>zero state</th>"
      << (c.exact_passed.empty() ? "" : "<th>passed state</th>");
    for (const auto& f : c.foreign) t << "<th>from " << esc(f) << "</th>";
    t << "</tr>\n";
    const size_t n = c.lengths.size();
    for (size_t i = 0; i < n; ++i) {
      t << "<tr><td>" << c.lengths[i] << "</td><td>" << fmt(c.exact[i], "%.2f") << "</td>"
        << (c.exact_passed.empty() ? "" : "<td>" + fmt(c.exact_passed[i], "%.2f") + "</td>");
      for (size_t k = 0; k < c.foreign.size(); ++k) t << "<td>" << fmt(c.exact_foreign[k * n + i], "%.2f") << "</td>";
      t << "</tr>\n";
    }
    t << "</table>\n";
    return t.str();
  });
}

}  // namespace statescope
