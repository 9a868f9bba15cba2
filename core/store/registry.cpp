// registry.cpp — the analyses' descriptors (analysis_record.h), from core/analyses/list.h.
#include <algorithm>

#include "core/analyses/list.h"
#include "core/base/find_key.h"
#include "core/store/analysis_io.h"
#include "core/store/group_io.h"

namespace statescope {

// Each record_<key> is defined in its folder's record.cpp.
AnalysisRecord record_eval();
#define STATESCOPE_DECLARE_RECORD(key, Result) AnalysisRecord record_##key();
STATESCOPE_ANALYSES(STATESCOPE_DECLARE_RECORD)
#undef STATESCOPE_DECLARE_RECORD

const std::vector<AnalysisRecord>& analysis_records() {
#define STATESCOPE_RECORD(key, Result) record_##key(),
  static const std::vector<AnalysisRecord> all{record_eval(), STATESCOPE_ANALYSES(STATESCOPE_RECORD)};
#undef STATESCOPE_RECORD
  return all;
}

const AnalysisRecord* find_analysis_record(const std::string& key) { return find_key(analysis_records(), key); }

void prefer_default(H5File& f, const std::string& run, const std::string& child) {
  std::vector<std::string> order;
  for (const auto& a : analysis_records())
    if (a.default_plot) order.push_back(a.group);
  order.push_back("train");
  auto rank = [&](const std::string& c) { return std::find(order.begin(), order.end(), c) - order.begin(); };
  const std::string now = has_attr(f, run, "default") ? f.attr(run, "default") : "train";
  if (rank(child) <= rank(now)) f.set_attr(run, "default", child);
}

void describe_group(H5File& f, const std::string& run, const std::string& group, const std::string& signal,
                    const std::vector<std::string>& axes, const std::string& definition,
                    const std::vector<std::pair<std::string, int64_t>>& attrs) {
  const std::string g = run + "/" + group;
  nx_data(f, g, signal, axes);
  prefer_default(f, run, group);
  if (!definition.empty()) f.set_attr(g, "definition", definition);
  for (const auto& [k, v] : attrs) f.set_attr_i64(g, k, v);
}

}  // namespace statescope
