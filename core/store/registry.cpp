// registry.cpp — the list of analyses (analysis_record.h). Registering an analysis is its line here.
#include <algorithm>

#include "core/analyses/attention/record.h"
#include "core/analyses/babi/record.h"
#include "core/analyses/copying/record.h"
#include "core/analyses/decay/record.h"
#include "core/analyses/effrem/record.h"
#include "core/analyses/eval/record.h"
#include "core/analyses/passkey/record.h"
#include "core/analyses/states/record.h"
#include "core/analyses/unexplored/record.h"
#include "core/store/group_io.h"

namespace statescope {

const std::vector<AnalysisRecord>& analysis_records() {
  static const std::vector<AnalysisRecord> all{
      make_record<&RunResults::eval, read_eval>("eval", "ppl", "ppl/nll", "Per position", true, inspect_eval, report_eval),
      make_record<&RunResults::effrem, read_effrem>("effrem", "effrem", "effrem/value", "Effective Remembrance", true, inspect_effrem, report_effrem),
      make_record<&RunResults::passkey, read_passkey>("passkey", "passkey", "passkey/accuracy", "Passkey retrieval", true, inspect_passkey, report_passkey),
      make_record<&RunResults::copying, read_copying>("copying", "copying", "copying/exact", "Copying", true, inspect_copying, report_copying),
      make_record<&RunResults::babi, read_babi>("babi", "babi", "babi/accuracy", "bAbI questions", true, inspect_babi, report_babi),
      make_record<&RunResults::unexplored, read_unexplored>("unexplored", "unexplored", "unexplored/outside", "Unexplored states", true, inspect_unexplored, report_unexplored),
      make_record<&RunResults::decay, read_decay>("decay", "decay", "decay/far", "Decay timescales", true, inspect_decay, report_decay, options_decay),
      make_record<&RunResults::attention, read_attention>("attention", "attention", "attention/M", "Effective attention", true, inspect_attention, report_attention, options_attention),
      make_record<&RunResults::states, read_state_stats>("states", "state_stats", "state_stats/histogram", "State distributions", false, inspect_state_stats, report_state_stats),
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

void describe_group(H5File& f, const std::string& run, const std::string& group, const std::string& signal,
                    const std::vector<std::string>& axes, const std::string& definition,
                    std::initializer_list<std::pair<const char*, int64_t>> attrs) {
  const std::string g = run + "/" + group;
  nx_data(f, g, signal, axes);
  prefer_default(f, run, group);
  if (!definition.empty()) f.set_attr(g, "definition", definition);
  for (const auto& [k, v] : attrs) f.set_attr_i64(g, k, v);
}

}  // namespace statescope
