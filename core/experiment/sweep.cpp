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

bool is_pretrain_field(const std::string& field) { return field.rfind("pretrain.", 0) == 0; }

// Whether `field` varies the run: a pretraining run by its model's fields (T, seed, pretrain.*);
// every run of a pretraining spec by its model's.
bool applies(const std::string& field, RunKind kind, const PolicySpec& p, const ExperimentSpec& s) {
  const bool baseline = kind == RunKind::Baseline;
  if (kind == RunKind::Pretrain) return field == "T" || field == "seed" || is_pretrain_field(field);
  if (field == "T" || is_pretrain_field(field)) return true;
  if (kind == RunKind::TrainingFree) return field == "seed";
  if (field == "seed") return !baseline || s.analyses.any() || s.pretrain.has_value();
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
  else if (s.pretrain && s.pretrain->set(field, v)) return;
  else throw Error("internal: sweep field " + field);
}

// Every cell of `axes` for one run kind, in grid order (last axis fastest).
void expand(const ExperimentSpec& s, const std::string& base, RunKind kind, const PolicySpec& p0, size_t index,
            std::vector<PlannedRun>& out, const InterventionSpec& iv = {}) {
  std::vector<const std::pair<std::string, std::vector<double>>*> axes;
  for (auto& a : s.sweep)
    if (applies(a.first, kind, p0, s)) axes.push_back(&a);
  std::vector<size_t> at(axes.size(), 0);
  while (true) {
    PlannedRun r;
    r.kind = kind;
    r.baseline = kind == RunKind::Baseline;
    r.index = index;
    r.spec = s;
    r.policy = p0;
    r.intervention = iv;
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
    if (s.pretrain) {  // the pretraining run whose model this run uses (itself for one)
      std::string key;
      for (const auto& [field, v] : r.cell)
        if (applies(field, RunKind::Pretrain, p0, s)) key += (key.empty() ? "" : ",") + field + "=" + sweep_value_text(v);
      r.model_key = key.empty() ? "pretrain" : "pretrain@" + key;
    }
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
  if (s.pretrain) expand(s, "pretrain", RunKind::Pretrain, PolicySpec{}, 0, out);
  if (s.baseline) expand(s, "baseline", RunKind::Baseline, PolicySpec{}, index++, out);
  for (const auto& [name, ps] : s.policies) expand(s, name, RunKind::Policy, ps, index++, out);
  for (const auto& [name, iv] : s.interventions) expand(s, name, RunKind::TrainingFree, PolicySpec{}, index++, out, iv);
  return out;
}

}  // namespace statescope
