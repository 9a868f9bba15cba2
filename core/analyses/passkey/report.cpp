// report.cpp — passkey retrieval in the report: per run, exact retrieval by length and depth.
#include <sstream>

#include "core/analyses/passkey/record.h"
#include "core/report/html.h"

namespace statescope {

std::string report_passkey(const std::vector<RunRecord>& runs, const ReportContext&) {
  return per_run(runs, &RunResults::passkey, [](size_t, const RunRecord& r, const PasskeyResult& p) {
    using namespace report;
    std::ostringstream t;
    t << "<h3>" << esc(r.name) << " (exact retrieval, " << p.samples
      << " samples per cell)</h3><table><tr><th>length \\ depth</th>";
    for (double d : p.depths) t << "<th>" << fmt(d, "%.2f") << "</th>";
    t << "</tr>\n";
    for (size_t i = 0; i < p.lengths.size(); ++i) {
      t << "<tr><td>" << p.lengths[i] << "</td>";
      for (size_t j = 0; j < p.depths.size(); ++j) t << "<td>" << fmt(p.accuracy[i * p.depths.size() + j], "%.2f") << "</td>";
      t << "</tr>\n";
    }
    t << "</table>\n";
    return t.str();
  });
}

}  // namespace statescope
