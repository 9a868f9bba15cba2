// registry.cpp — the list of analyses (analysis_record.h). Registering an analysis is its line here.
#include <algorithm>

#include "core/analyses/babi/record.h"
#include "core/analyses/copying/record.h"
#include "core/analyses/effrem/record.h"
#include "core/analyses/eval/record.h"
#include "core/analyses/passkey/record.h"
#include "core/analyses/states/record.h"
#include "core/analyses/unexplored/record.h"
#include "core/store/group_io.h"

namespace statescope {

const std::vector<AnalysisRecord>& analysis_records() {
  static const std::vector<AnalysisRecord> all{
      eval_record(),
      effrem_record(),
      passkey_record(),
      copying_record(),
      babi_record(),
      unexplored_record(),
      state_stats_record(),
  };
  return all;
}

const AnalysisRecord* find_analysis_record(const std::string& key) {
  for (const auto& a : analysis_records())
    if (a.key == key) return &a;
  return nullptr;
}

void prefer_default(H5File& f, const std::string& run, const std::string& child) {
  std::vector<std::string> order;
  for (const auto& a : analysis_records())
    if (a.default_plot) order.push_back(a.group);
  order.push_back("train");
  auto rank = [&](const std::string& c) { return std::find(order.begin(), order.end(), c) - order.begin(); };
  const std::string now = has_attr(f, run, "default") ? f.attr(run, "default") : "train";
  if (rank(child) <= rank(now)) f.set_attr(run, "default", child);
}

}  // namespace statescope
