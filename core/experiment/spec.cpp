// spec.cpp — experiment spec defaults, parsing and validation (see spec.h). No LibTorch.
#include "core/experiment/spec.h"
#include "core/experiment/sweep.h"  // plan_runs (each pretrained model checked whole)
#include "core/store/analysis_record.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "core/base/error.h"
#include "core/base/json_error.h"
#include "core/analyses/section.h"  // positive
#include "core/base/json_fields.h"
#include "core/base/names.h"
#include "core/compute/runtime.h"

namespace statescope {
namespace {

using nlohmann::json;

TrainOptions parse_posttrain(const JsonFields& f, bool& freeze_set) {
  f.only({"steps", "batch", "lr", "warmup", "min_lr_ratio", "weight_decay", "grad_clip", "freeze_A_log"});
  TrainOptions t = ExperimentSpec::default_posttrain();
  read_schedule(f, t);
  freeze_set = f.has("freeze_A_log");
  f.read("freeze_A_log", t.freeze_A_log);
  if (t.steps < 0 || t.batch <= 0 || !(t.lr > 0))
    throw Error(f.src() + ": posttrain needs steps >= 0, batch > 0, lr > 0");
  if (t.warmup < 0) f.fail("warmup", "must be >= 0, got " + std::to_string(t.warmup));
  // T >= 2 whatever the model's record says, so this much is known before the model is read (the
  // trainer checks batch x T itself once T is known).
  if (t.batch > kMaxTokensPerStep / 2)
    f.fail("batch", "must keep batch x T <= " + std::to_string(kMaxTokensPerStep) + " tokens per step, got " +
                        std::to_string(t.batch));
  if (!(t.min_lr_ratio >= 0 && t.min_lr_ratio <= 1)) f.fail("min_lr_ratio", "must be in [0, 1], got " + f.json().at("min_lr_ratio").dump());
  if (!(t.weight_decay >= 0)) f.fail("weight_decay", "must be >= 0, got " + f.json().at("weight_decay").dump());
  if (!(t.grad_clip >= 0)) f.fail("grad_clip", "must be >= 0 (0: no clipping), got " + f.json().at("grad_clip").dump());
  return t;
}

PolicySpec parse_policy(const JsonFields& f, size_t index) {
  f.only({"kind", "name", "sigma", "ema", "calibration_batches", "fit_length", "pass_conv"});
  PolicySpec ps;
  ps.kind = f.get<std::string>("kind", "");
  f.read("sigma", ps.sigma);
  f.read("ema", ps.ema);
  f.read("calibration_batches", ps.calibration_batches);
  f.read("fit_length", ps.fit_length);
  if (f.has("pass_conv")) ps.pass_conv = f.get("pass_conv", false) ? 1 : 0;
  try {
    check_policy(ps);
  } catch (const Error& e) {
    throw Error(f.src() + ": field 'policies[" + std::to_string(index) + "]': " + e.what());
  }
  return ps;
}

// One training-free intervention (intervention_spec.h). "factor": a number (the whole model), a list
// (per layer) or a list of lists (per layer and head); "from": a position or "T".
InterventionSpec parse_intervention(const JsonFields& f, size_t index) {
  f.only({"kind", "name", "factor", "from", "period", "windows", "margin", "global_threshold", "clamp_top", "length"});
  InterventionSpec iv;
  iv.kind = f.get<std::string>("kind", "");
  const std::string at = "interventions[" + std::to_string(index) + "]";
  auto knob_for = [&](const char* key, std::initializer_list<const char*> kinds) {
    if (!f.has(key)) return false;
    for (const char* k : kinds)
      if (iv.kind == k) return true;
    f.fail(key, "is not a knob of the " + iv.kind + " intervention");
  };
  if (knob_for("factor", {"dt_scale", "a_scale"})) {
    const json& v = f.json().at("factor");
    iv.factors.clear();
    if (v.is_number()) {
      iv.factors.push_back(v.get<double>());
    } else if (v.is_array() && !v.empty() && v.front().is_array()) {
      iv.per = "head";
      size_t width = v.front().size();
      for (const json& row : v) {
        if (!row.is_array() || row.size() != width) f.fail("factor", "per head must be rows of equal length (one per layer), got " + v.dump());
        for (const json& x : row) {
          if (!x.is_number()) f.fail("factor", "must hold numbers, got " + x.dump());
          iv.factors.push_back(x.get<double>());
        }
      }
    } else if (v.is_array() && !v.empty()) {
      iv.per = "layer";
      for (const json& x : v) {
        if (!x.is_number()) f.fail("factor", "must hold numbers, got " + x.dump());
        iv.factors.push_back(x.get<double>());
      }
    } else {
      f.fail("factor", "must be a number, a list per layer or a list of lists per layer and head, got " + v.dump());
    }
  }
  if (knob_for("from", {"dt_scale"})) {
    const json& v = f.json().at("from");
    if (v.is_string() && v.get<std::string>() == "T") iv.from_T = true;
    else iv.from = f.get<int64_t>("from", 0);
  }
  if (knob_for("period", {"reset", "attention_window"})) f.read("period", iv.period);
  if (knob_for("windows", {"clip", "longmamba"})) f.read("windows", iv.windows);
  if (knob_for("margin", {"clip"})) f.read("margin", iv.margin);
  if (knob_for("global_threshold", {"longmamba"})) f.read("global_threshold", iv.global_threshold);
  if (knob_for("length", {"longmamba"})) f.read("length", iv.length);
  if (knob_for("clamp_top", {"longmamba"})) f.read("clamp_top", iv.clamp_top);
  if ((iv.kind == "reset" || iv.kind == "attention_window") && !f.has("period"))
    f.fail("period", "is required by the " + iv.kind + " intervention");
  if ((iv.kind == "dt_scale" || iv.kind == "a_scale") && !f.has("factor"))
    f.fail("factor", "is required by the " + iv.kind + " intervention (a number, a list per layer, or rows per layer and head)");
  try {
    check_intervention(iv);
  } catch (const Error& e) {
    throw Error(f.src() + ": field '" + at + "': " + e.what());
  }
  return iv;
}

EvalOptions parse_eval(const JsonFields& f) {
  f.only({"length", "sequences", "segment", "batch", "own_reference"});
  EvalOptions e = ExperimentSpec::default_eval();
  f.read("length", e.length);
  f.read("own_reference", e.own_reference);
  f.read("sequences", e.sequences);
  f.read("segment", e.segment);
  f.read("batch", e.batch);
  if (e.length < 0) f.fail("length", "must be >= 0 (0: 64T), got " + std::to_string(e.length));
  positive(f, "sequences", e.sequences);
  positive(f, "segment", e.segment);
  positive(f, "batch", e.batch);
  return e;
}

}  // namespace

TrainOptions ExperimentSpec::default_posttrain() {
  TrainOptions t;
  t.steps = 200;
  t.batch = 16;
  t.lr = 5e-4;
  t.warmup = 10;
  t.min_lr_ratio = 0.1;
  t.weight_decay = 0.1;
  t.grad_clip = 1.0;
  return t;
}

EvalOptions ExperimentSpec::default_eval() {
  EvalOptions e;
  e.length = 0;  // 64T once T is known
  e.sequences = 32;
  e.segment = 512;
  e.batch = 8;
  return e;
}

std::string model_label(const std::string& model) {
  std::string m = model;
  while (m.size() > 1 && m.back() == '/') m.pop_back();
  const auto slash = m.rfind('/');
  return slash == std::string::npos ? m : m.substr(slash + 1);
}

json AnalysesSpec::section(const std::string& key) const {
  const auto it = sections.find(key);
  return it == sections.end() ? json::object() : json::parse(it->second);
}

// Each key is a registered analysis (core/analyses/list.h) whose record checks its section.
AnalysesSpec parse_analyses(const json& j, const std::string& src) {
  const JsonFields f(j, src, "analyses.");
  AnalysesSpec a;
  for (auto& [k, v] : j.items()) {
    const AnalysisRecord* r = find_analysis_record(k);
    if (!r || !r->options) {
      std::string list;
      for (const auto& known : analysis_records())
        if (known.options) list += (list.empty() ? "" : ", ") + known.key;
      f.fail(k, "is not an analysis (known: " + list + ")");
    }
    a.sections[k] = r->options(v, src).dump();
  }
  return a;
}

// "sweep": {"field": [values], ..., "mode": "grid" | "list"}; every value checked as the field itself would be.
std::vector<std::pair<std::string, std::vector<double>>> parse_sweep(const JsonFields& f, ExperimentSpec& s) {
  std::vector<std::string> fields{"seed", "T", "posttrain.steps", "posttrain.batch", "posttrain.warmup",
                                  "posttrain.lr", "sigma", "fit_length"};
  for (const auto& p : PretrainSpec::sweep_fields()) fields.push_back(p);
  std::vector<std::pair<std::string, std::vector<double>>> axes;
  size_t cells = 1;
  const std::string mode = f.get<std::string>("mode", "grid");
  if (mode != "grid" && mode != "list") f.fail("mode", "must be \"grid\" (every combination) or \"list\" (the i-th values together)");
  for (auto it = f.json().begin(); it != f.json().end(); ++it) {
    const std::string& k = it.key();
    if (k == "mode") continue;
    if (std::find(fields.begin(), fields.end(), k) == fields.end())
      f.fail(k.c_str(), "cannot be swept (numeric fields that can: seed, T, posttrain.steps, posttrain.batch, "
                        "posttrain.warmup, posttrain.lr, sigma, fit_length, and with a pretrain section " +
                        [] { std::string l; for (auto& p : PretrainSpec::sweep_fields()) l += (l.empty() ? "" : ", ") + p; return l; }() + ")");
    const bool pretrain_field = k.rfind("pretrain.", 0) == 0;
    if (pretrain_field && !s.pretrain) f.fail(k.c_str(), "is swept but the spec has no 'pretrain' section");
    if (!it.value().is_array() || it.value().empty()) f.fail(k.c_str(), "must be a non-empty list of numbers");
    std::vector<double> vals;
    for (const json& v : it.value()) {
      if (!v.is_number()) f.fail(k.c_str(), "must hold numbers, got " + v.dump());
      const double x = v.get<double>();
      const bool whole = std::isfinite(x) && x == std::floor(x);
      // A pretrain field: a size or a count is a whole number >= 1 (warmup >= 0), the rest positive
      // (dt_limit >= 0); each cell's model is checked whole below (sizes must fit together).
      auto pretrain_ok = [&] {
        const bool real = k == "pretrain.lr" || k.rfind("pretrain.dt_", 0) == 0 || k.rfind("pretrain.a_", 0) == 0;
        if (!std::isfinite(x)) return false;
        if (real) return k == "pretrain.dt_limit" ? x >= 0 : x > 0;
        return whole && x >= (k == "pretrain.warmup" ? 0 : 1) && x <= 1e9;
      };
      const bool ok = pretrain_field          ? pretrain_ok()
                    : k == "posttrain.lr" ? x > 0 && std::isfinite(x)
                    : k == "sigma"        ? x > 0 && std::isfinite(x)
                    : k == "T"            ? whole && x >= 2 && x <= 1e9
                    : k == "posttrain.batch" ? whole && x >= 1 && x <= kMaxTokensPerStep / 2
                                             : whole && x >= 0 && x <= 1e15;
      if (!ok) f.fail(k.c_str(), "holds " + v.dump() + ", which the field itself does not accept");
      if (mode == "grid" && std::find(vals.begin(), vals.end(), x) != vals.end())
        f.fail(k.c_str(), "holds " + v.dump() + " twice");
      vals.push_back(x);
    }
    if (k == "sigma" && std::none_of(s.policies.begin(), s.policies.end(), [](auto& p) { return p.second.kind == "random"; }))
      f.fail(k.c_str(), "is swept but no policy is random");
    if (k == "fit_length" && std::none_of(s.policies.begin(), s.policies.end(), [](auto& p) { return p.second.kind == "fitted"; }))
      f.fail(k.c_str(), "is swept but no policy is fitted");
    if (mode == "list" && !axes.empty() && vals.size() != axes.front().second.size())
      f.fail(k.c_str(), "has " + std::to_string(vals.size()) + " values; a list sweep needs as many as '" +
                            axes.front().first + "' (" + std::to_string(axes.front().second.size()) + ")");
    cells = mode == "list" ? vals.size() : cells * vals.size();
    if (cells > 10000) f.fail(k.c_str(), "makes the grid larger than 10000 cells");
    axes.emplace_back(k, vals);
  }
  s.sweep_list = mode == "list";
  return axes;
}

ExperimentSpec parse_spec(const json& j, const std::string& src) {
  const JsonFields f(j, src);
  f.only({"comment", "model", "models", "data", "text_field", "device", "precision", "scan", "T", "seed", "baseline", "posttrain",
          "policies", "interventions", "eval", "save_models", "analyses", "sweep", "pretrain"});
  ExperimentSpec s;
  f.read("comment", s.comment);
  f.read("model", s.model);
  if (f.has("models")) {
    if (f.has("model")) f.fail("models", "and 'model' are both given; a spec names one model or a list of them");
    const json& ms = j.at("models");
    if (!ms.is_array() || ms.size() < 2) f.fail("models", "must be a list of two or more models (one model: 'model')");
    std::set<std::string> labels;
    for (const json& m : ms) {
      if (!m.is_string()) f.fail("models", "must hold model names or folders, got " + m.dump());
      const std::string name = m.get<std::string>();
      const std::string label = model_label(name);
      check_name(label, src, "field 'models'");  // it starts the names of the model's runs
      if (!labels.insert(label).second)
        f.fail("models", "holds two models named '" + label + "' (their runs would share names)");
      s.models.push_back(name);
    }
    s.model = s.models.front();
  }
  f.read("data", s.data);
  f.read("text_field", s.text_field);
  if (s.text_field.empty()) f.fail("text_field", "must name a field or column");
  f.read("device", s.device);
  f.read("precision", s.precision);
  f.read("scan", s.scan);
  f.read("T", s.T);
  if (f.has("T") && s.T < 2) f.fail("T", "must be >= 2 (leave it out to use the model's record), got " + std::to_string(s.T));
  f.read("seed", s.seed);
  f.read("baseline", s.baseline);
  f.read("save_models", s.save_models);
  s.posttrain = parse_posttrain(f.child("posttrain"), s.freeze_set);
  if (f.has("pretrain")) {
    for (const char* other : {"model", "models"})
      if (f.has(other)) f.fail("pretrain", std::string("and '") + other + "' are both given; a spec loads a model or pretrains one");
    s.pretrain = parse_pretrain(f.child("pretrain"));
    s.model = "";
    if (f.has("posttrain") && j.at("posttrain").contains("freeze_A_log"))
      f.fail("posttrain.freeze_A_log", "is given with 'pretrain', whose freeze_A decides it");
    s.freeze_set = true;
    s.posttrain.freeze_A_log = s.pretrain->freeze_A;
  }
  std::set<std::string> names;
  if (s.baseline) names.insert("baseline");
  if (s.pretrain) names.insert("pretrain");  // the pretraining runs' name
  // A list of named runs ("policies", "interventions"): each entry parsed by `parse`, named by its
  // "name" or its kind, names unique among every run's (a repeated kind becomes kind_2, ...).
  auto runs = [&](const char* key, auto parse, auto& out) {
    const json list = f.get(key, json::array());
    if (!list.is_array()) f.fail(key, "must be a list");
    const std::string path = std::string(key) + "[].";
    for (const json& p : list) {
      const JsonFields pf(p, src, path);
      const auto spec = parse(pf, out.size());
      std::string name = pf.get<std::string>("name", spec.kind);
      check_name(name, src, "field '" + path + "name'");  // it becomes the run's group in the file
      // A name given is the run's (never renamed in silence); an unnamed repeated kind becomes kind_2, ...
      if (pf.has("name") && names.count(name))
        pf.fail("name", "'" + name + "' is already a run's name" +
                            (name == "baseline" || name == "pretrain" ? " (statescope's own " + name + " run)" : std::string()) +
                            "; names must be unique");
      for (int k = 2; names.count(name); ++k) name = spec.kind + "_" + std::to_string(k);
      names.insert(name);
      out.emplace_back(name, spec);
    }
  };
  runs("policies", parse_policy, s.policies);
  runs("interventions", parse_intervention, s.interventions);
  if (f.has("analyses")) s.analyses = parse_analyses(j.at("analyses"), src);
  s.eval = parse_eval(f.child("eval"));
  if (f.has("sweep")) s.sweep = parse_sweep(f.child("sweep"), s);
  // Every model the sweep pretrains must be buildable as a whole (headdim dividing expand x d_model
  // in every cell, not only value by value).
  if (s.pretrain)
    for (const auto& r : plan_runs(s))
      if (r.kind == RunKind::Pretrain && !r.cell.empty())
        r.spec.pretrain->check(src + ": sweep cell " + r.name.substr(r.name.find('@') + 1));
  if (s.pretrain && s.T <= 0 && std::none_of(s.sweep.begin(), s.sweep.end(), [](auto& a) { return a.first == "T"; }))
    f.fail("T", "is required with 'pretrain' (a fresh model has no training context of its own)");
  if (plan_runs(s).empty())
    throw Error(src + ": nothing to run: no baseline (\"baseline\": false), no policies, no interventions and no pretrain "
                "section; name at least one run");
  return s;
}

ExperimentSpec parse_spec(const std::string& text, const std::string& src) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 3e477
    throw Error(src + ": " + json_error_text(e));
  }
  return parse_spec(j, src);
}

ExperimentSpec check_spec(const std::string& text, const std::string& src) {
  ExperimentSpec spec = parse_spec(text, src);
  auto named = [&](const char* field, const std::string& value, void (*check)(const std::string&)) {
    if (value.empty()) return;  // the process-wide setting holds
    try {
      check(value);
    } catch (const Error& e) {
      throw Error(src + ": field '" + field + "': " + e.what());
    }
  };
  named("device", spec.device, [](const std::string& d) { resolve_device(d); });
  named("precision", spec.precision, check_precision);
  named("scan", spec.scan, check_scan_kernels);
  return spec;
}

}  // namespace statescope
