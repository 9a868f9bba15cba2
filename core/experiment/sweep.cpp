// sweep.cpp — a spec's runs, one per policy and sweep cell (see sweep.h).
#include "core/experiment/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/error.h"

namespace statescope {

std::string sweep_value_text(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

namespace {

bool applies(const std::string& field, bool baseline, const PolicySpec& p, bool has_analyses) {
  if (field == "T") return true;
  if (field == "seed") return !baseline || has_analyses;
  if (field == "sigma") return !baseline && p.kind == "random";
  if (field == "fit_length") return !baseline && p.kind == "fitted";
  return !baseline;  // posttrain.*
}

void apply(const std::string& field, double v, ExperimentSpec& s, PolicySpec& p) {
  const auto n = static_cast<int64_t>(v);
  if (field == "seed") s.seed = static_cast<uint64_t>(n);
  else if (field == "T") s.T = n;
  else if (field == "posttrain.steps") s.posttrain.steps = n;
  else if (field == "posttrain.batch") s.posttrain.batch = n;
  else if (field == "posttrain.warmup") s.posttrain.warmup = n;
  else if (field == "posttrain.lr") s.posttrain.lr = v;
  else if (field == "sigma") p.sigma = v;
  else if (field == "fit_length") p.fit_length = n;
  else throw Error("internal: sweep field " + field);
}

// Every cell of `axes` for one run kind, in grid order (last axis fastest).
void expand(const ExperimentSpec& s, const std::string& base, bool baseline, const PolicySpec& p0, size_t index,
            std::vector<PlannedRun>& out) {
  std::vector<const std::pair<std::string, std::vector<double>>*> axes;
  for (auto& a : s.sweep)
    if (applies(a.first, baseline, p0, s.analyses.any())) axes.push_back(&a);
  std::vector<size_t> at(axes.size(), 0);
  while (true) {
    PlannedRun r;
    r.baseline = baseline;
    r.index = index;
    r.spec = s;
    r.policy = p0;
    std::string cell, group;
    for (size_t i = 0; i < axes.size(); ++i) {
      const double v = axes[i]->second[at[i]];
      apply(axes[i]->first, v, r.spec, r.policy);
      r.cell.emplace_back(axes[i]->first, v);
      const std::string kv = axes[i]->first + "=" + sweep_value_text(v);
      cell += (cell.empty() ? "" : ",") + kv;
      if (axes[i]->first != "seed") group += (group.empty() ? "" : ",") + kv;
    }
    r.name = cell.empty() ? base : base + "@" + cell;
    r.group = group.empty() ? base : base + "@" + group;
    // A list whose fields do not all apply to this run can repeat a cell: it runs once.
    if (std::none_of(out.begin(), out.end(), [&](const PlannedRun& p) { return p.name == r.name; }))
      out.push_back(std::move(r));
    if (out.size() > kSweepMaxRuns)
      throw Error("the sweep makes more than " + std::to_string(kSweepMaxRuns) + " runs");
    if (s.sweep_list) {  // every field's next value together
      if (axes.empty() || ++at[0] == axes[0]->second.size()) break;
      for (auto& a : at) a = at[0];
      continue;
    }
    size_t i = axes.size();
    while (i > 0 && ++at[i - 1] == axes[i - 1]->second.size()) at[--i] = 0;
    if (i == 0) break;
  }
}

}  // namespace

std::vector<PlannedRun> plan_runs(const ExperimentSpec& s) {
  std::vector<PlannedRun> out;
  size_t index = 0;
  if (s.baseline) expand(s, "baseline", true, PolicySpec{}, index++, out);
  for (const auto& [name, ps] : s.policies) expand(s, name, false, ps, index++, out);
  return out;
}

}  // namespace statescope
