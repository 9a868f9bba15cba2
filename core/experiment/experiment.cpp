// experiment.cpp — spec -> runs -> experiment file -> summary table.
#include "core/experiment/experiment.h"

#include "core/data/dataset.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/experiment/analyses.h"
#include "core/model/checkpoint.h"
#include "core/data/corpus.h"
#include "core/base/error.h"
#include "core/analyses/evaluate.h"
#include "core/store/experiment_store.h"
#include "core/model/model_registry.h"
#include "core/compute/runtime.h"
#include "core/data/tokenizer.h"
#include "core/train/trainer.h"
#include "core/base/version.h"

namespace statescope {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct Spec {
  std::string model = "embedded", data = "embedded";
  std::string device, precision;  // "" = the process-wide setting (CLI --device/--precision)
  std::string scan;               // "" = the process-wide setting (CLI --scan): "aten" | "fused"
  int64_t T = 0;
  uint64_t seed = 0;
  bool baseline = true;
  TrainOptions train;
  bool freeze_set = false;
  std::vector<std::pair<std::string, PolicySpec>> policies;  // (run name, policy)
  EvalOptions eval;
  std::string save_models;
  AnalysesSpec analyses;
};

template <class T>
T field(const json& j, const char* key, T dflt, const std::string& src, const std::string& prefix = "") {
  if (!j.contains(key)) return dflt;
  try {
    return j.at(key).get<T>();
  } catch (const std::exception&) {
    throw Error(src + ": field '" + prefix + key + "' has the wrong type: " + j.at(key).dump());
  }
}

Spec parse_spec(const std::string& text, const std::string& src) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(src + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw Error(src + ": expected a JSON object");
  static const std::set<std::string> known{"model", "data", "T", "seed", "baseline", "posttrain", "policies", "eval",
                                           "save_models", "comment", "analyses", "device", "precision",
                                           "scan"};
  for (auto& [k, v] : j.items())
    if (!known.count(k)) throw Error(src + ": unknown field '" + k + "'");
  Spec s;
  s.model = field<std::string>(j, "model", s.model, src);
  s.data = field<std::string>(j, "data", s.data, src);
  s.device = field<std::string>(j, "device", "", src);
  s.precision = field<std::string>(j, "precision", "", src);
  s.scan = field<std::string>(j, "scan", "", src);
  s.T = field<int64_t>(j, "T", 0, src);
  s.seed = field<uint64_t>(j, "seed", 0, src);
  s.baseline = field<bool>(j, "baseline", true, src);
  s.save_models = field<std::string>(j, "save_models", "", src);
  const json pt = j.value("posttrain", json::object());
  auto& t = s.train;
  t.steps = field<int64_t>(pt, "steps", 200, src, "posttrain.");
  t.batch = field<int64_t>(pt, "batch", 16, src, "posttrain.");
  t.lr = field<double>(pt, "lr", 5e-4, src, "posttrain.");
  t.warmup = field<int64_t>(pt, "warmup", 10, src, "posttrain.");
  t.min_lr_ratio = field<double>(pt, "min_lr_ratio", 0.1, src, "posttrain.");
  t.weight_decay = field<double>(pt, "weight_decay", 0.1, src, "posttrain.");
  t.grad_clip = field<double>(pt, "grad_clip", 1.0, src, "posttrain.");
  s.freeze_set = pt.contains("freeze_A_log");
  t.freeze_A_log = field<bool>(pt, "freeze_A_log", false, src, "posttrain.");
  if (t.steps < 0 || t.batch <= 0 || !(t.lr > 0)) throw Error(src + ": posttrain needs steps >= 0, batch > 0, lr > 0");
  std::set<std::string> names;
  if (s.baseline) names.insert("baseline");
  for (auto& p : j.value("policies", json::array())) {
    PolicySpec ps;
    ps.kind = field<std::string>(p, "kind", "", src, "policies[].");
    ps.sigma = field<double>(p, "sigma", 1.0, src, "policies[].");
    ps.ema = field<double>(p, "ema", 0.99, src, "policies[].");
    ps.calibration_batches = field<int64_t>(p, "calibration_batches", 4, src, "policies[].");
    ps.fit_length = field<int64_t>(p, "fit_length", 0, src, "policies[].");
    if (p.contains("pass_conv")) ps.pass_conv = field<bool>(p, "pass_conv", false, src, "policies[].") ? 1 : 0;
    try {
      make_policy(ps, 0);  // validates kind and knobs
    } catch (const Error& e) {
      throw Error(src + ": field 'policies[" + std::to_string(s.policies.size()) + "]': " + e.what());
    }
    std::string name = field<std::string>(p, "name", ps.kind, src, "policies[].");
    for (int k = 2; names.count(name); ++k) name = ps.kind + "_" + std::to_string(k);
    names.insert(name);
    s.policies.emplace_back(name, ps);
  }
  if (j.contains("analyses")) s.analyses = parse_analyses(j["analyses"], src);
  const json ev = j.value("eval", json::object());
  s.eval.length = field<int64_t>(ev, "length", 0, src, "eval.");
  s.eval.sequences = field<int64_t>(ev, "sequences", 32, src, "eval.");
  s.eval.segment = field<int64_t>(ev, "segment", 512, src, "eval.");
  s.eval.batch = field<int64_t>(ev, "batch", 8, src, "eval.");
  return s;
}

double mean_range(const std::vector<double>& v, int64_t a, int64_t b) {
  double s = 0;
  for (int64_t i = a; i < b; ++i) s += v[i];
  return b > a ? s / static_cast<double>(b - a) : NAN;
}

}  // namespace

RunSummary summarize(const EvalResult& r, const std::string& name, const std::string& intervention) {
  RunSummary s;
  s.name = name;
  s.intervention = intervention;
  s.T = r.T;
  const double k = 1.0 / std::log(2.0);  // nats -> bits (bytes are tokens)
  const int64_t L = r.length, T = r.T, n = r.sequences;
  s.loss_near = k * mean_range(r.nll, std::min(T, L), std::min(2 * T, L));
  s.loss_far = k * mean_range(r.nll, L / 2, L);
  for (int64_t a = T; a < L; a *= 2) {
    const int64_t b = std::min(2 * a, L);
    s.bins.emplace_back(a, b);
    if (r.windowed_seq.empty()) continue;
    std::vector<double> per(n, 0.0);  // bin-mean excess of each sequence
    for (int64_t q = 0; q < n; ++q) {
      for (int64_t i = a; i < b; ++i) per[q] += r.nll_seq[q * L + i] - r.windowed_seq[q * L + i];
      per[q] /= static_cast<double>(b - a);
    }
    double m = 0, v = 0;
    for (double x : per) m += x;
    m /= n;
    for (double x : per) v += (x - m) * (x - m);
    s.excess.push_back(k * m);
    s.excess_se.push_back(n > 1 ? k * std::sqrt(v / (n - 1) / n) : 0.0);
  }
  if (!r.norm.empty() && T - 1 < L) {
    double at = 0, far = 0;
    for (int64_t l = 0; l < r.n_layer; ++l) {
      at += r.norm[l * L + T - 1];
      far += mean_range(std::vector<double>(r.norm.begin() + l * L, r.norm.begin() + (l + 1) * L), L / 2, L);
    }
    s.norm_ratio = at > 0 ? far / at : NAN;
  }
  return s;
}

std::string format_summary_table(const std::vector<RunSummary>& runs) {
  if (runs.empty()) return "";
  std::ostringstream o;
  o << std::fixed;
  size_t name_w = 12;  // runs from several files are named file/run
  for (auto& r : runs) name_w = std::max(name_w, r.name.size() + 2);
  // Runs whose position bins differ (other T or evaluation length) get a table of their own.
  std::vector<bool> done(runs.size(), false);
  for (size_t g = 0; g < runs.size(); ++g) {
    if (done[g]) continue;
    const auto& bins = runs[g].bins;
    if (g) o << "\n";
    o << std::left << std::setw(static_cast<int>(name_w)) << "run" << std::setw(20) << "intervention" << std::right
      << std::setw(10) << "loss@T..2T" << std::setw(10) << "loss far";
    for (auto& [a, b] : bins) {
      std::ostringstream h;
      h << "exc " << a << "-" << b;
      o << std::setw(18) << h.str();
    }
    o << std::setw(11) << "norm far/T" << "\n";
    for (size_t k = g; k < runs.size(); ++k) {
      const auto& r = runs[k];
      if (done[k] || r.bins != bins) continue;
      done[k] = true;
      o << std::left << std::setw(static_cast<int>(name_w)) << r.name << std::setw(20) << r.intervention << std::right
        << std::setprecision(3) << std::setw(10) << r.loss_near << std::setw(10) << r.loss_far;
      for (size_t i = 0; i < r.excess.size(); ++i) {
        std::ostringstream c;
        c << std::showpos << std::fixed << std::setprecision(3) << r.excess[i] << std::noshowpos << "±"
          << std::setprecision(3) << r.excess_se[i];
        o << std::setw(19) << c.str();  // "±" is two bytes
      }
      o << std::setw(11) << std::setprecision(2) << r.norm_ratio
        << (r.status.empty() || r.status == "finished" ? "" : "  [" + r.status + "]") << "\n";
    }
  }
  o << "(losses and excess in bits per token, i.e. per byte for byte-level models; excess = full-context loss minus the state-reset windowed loss, "
       "mean ± standard error over sequences; bins are positions)\n";
  return o.str();
}

namespace {

// The compute fields, with the runtime's own checks; the error names the spec field.
void check_compute_fields(const Spec& spec, const std::string& src) {
  auto named = [&](const char* field, const std::string& value, const std::function<void()>& check) {
    if (value.empty()) return;  // the process-wide setting holds
    try {
      check();
    } catch (const Error& e) {
      throw Error(src + ": field '" + field + "': " + e.what());
    }
  };
  named("device", spec.device, [&] { resolve_device(spec.device); });
  named("precision", spec.precision, [&] { check_precision(spec.precision); });
  named("scan", spec.scan, [&] { check_scan_kernels(spec.scan); });
}

}  // namespace

void check_spec(const std::string& spec_text, const std::string& src) {
  check_compute_fields(parse_spec(spec_text, src), src);
}

std::vector<RunSummary> run_experiment(const std::string& spec_text, const std::string& src, const std::string& out_path,
                                       const ExperimentProgressFn& progress, const RunDoneFn& run_done) {
  Spec spec = parse_spec(spec_text, src);
  struct Restore {  // the spec's device/precision/scan hold for this experiment only
    std::string d = compute_device(), p = compute_precision(), s = scan_kernels();
    ~Restore() {
      try {
        set_compute(d, p);
        set_scan_kernels(s);
      } catch (...) {
      }
    }
  } restore;
  check_compute_fields(spec, src);  // before anything changes
  if (!spec.device.empty() || !spec.precision.empty())
    set_compute(spec.device.empty() ? compute_device() : spec.device,
                spec.precision.empty() ? compute_precision() : spec.precision);
  if (!spec.scan.empty()) set_scan_kernels(spec.scan);
  const std::string model_dir = resolve_model(spec.model);
  ModelRecord rec = read_model_record(model_dir);
  if (spec.T <= 0) spec.T = rec.T;
  if (spec.T <= 0) throw Error(src + ": field 'T' is required (the model directory records no training context)");
  if (!spec.freeze_set) spec.train.freeze_A_log = rec.freeze_A_log;
  spec.train.T = spec.T;
  spec.train.seed = spec.seed;
  spec.eval.T = spec.T;
  if (spec.eval.length <= 0) spec.eval.length = 64 * spec.T;
  const int64_t vocab = load_config_file((std::filesystem::path(model_dir) / "config.json").string()).vocab_size;
  const auto data_t0 = std::chrono::steady_clock::now();
  const Corpus corpus = load_model_data(spec.data, model_dir, vocab, {}, [&](int64_t done, int64_t total) {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - data_t0).count();
    ExperimentProgress p{"data", "tokenize", done, total, done / std::max(1e-9, el),
                         el / std::max<int64_t>(done, 1) * (total - done), 0};
    return !progress || progress(p);
  });
  eval_sequences(corpus.validation, spec.eval.length, spec.eval.sequences);  // fails early if too short
  const auto tokenizer = load_tokenizer(model_dir);  // passkey and bAbI prompts in the model's tokens
  const std::string hash = weights_hash(model_dir);

  auto file = ExperimentFile::create(out_path);
  file->file().set_attr("/", "spec", spec_text);
  file->file().set_attr("/", "spec_source", src);
  std::vector<RunSummary> out;
  bool cancelled = false;

  auto evaluate_into = [&](Mamba2LM& model, const std::string& run, const std::string& label) {
    using clk = std::chrono::steady_clock;
    const auto t0 = clk::now();
    auto r = evaluate_positions(model, corpus.validation, spec.eval, [&](int64_t done, int64_t total) {
      const double el = std::chrono::duration<double>(clk::now() - t0).count();
      ExperimentProgress p{run, "eval", done, total, done / std::max(1e-9, el), el / done * (total - done), 0};
      if (progress && !progress(p)) {
        cancelled = true;
        return false;
      }
      return true;
    });
    file->write_eval(run, r);
    auto s = summarize(r, run, label);
    s.status = "finished";
    return s;
  };

  auto info_for = [&](const std::string& name, const std::string& label, const json& extra) {
    json js = json::parse(spec_text);
    js["run"] = extra;
    return RunInfo{name, js.dump(), model_dir, hash, label, spec.seed, std::string(kVersionString) + ", " + runtime_summary(),
                   compute_summary()};
  };

  std::vector<std::pair<std::string, PolicySpec>> runs;
  if (spec.baseline) runs.emplace_back("baseline", PolicySpec{});
  runs.insert(runs.end(), spec.policies.begin(), spec.policies.end());
  for (size_t i = 0; i < runs.size() && !cancelled; ++i) {
    const auto& [name, ps] = runs[i];
    const bool is_baseline = spec.baseline && i == 0;
    const std::string label = is_baseline ? "none (baseline)" : ps.label();
    file->begin_run(info_for(name, label, is_baseline ? json{{"posttrain", false}} : json{{"policy", ps.kind}}));
    try {
      auto model = load_model_dir(model_dir);
      if (!is_baseline) {
        auto policy = make_policy(ps, spec.seed + 1000 + i);
        auto tr = train(model, corpus.train, *policy, spec.train, [&](const StepInfo& s) {
          file->append_train(name, s);
          ExperimentProgress p{name, "train", s.step, s.steps, s.tokens_per_s, s.eta_s, s.loss};
          if (progress && !progress(p)) {
            cancelled = true;
            return false;
          }
          return true;
        });
        if (tr.status != "finished") {
          file->set_status(name, tr.status, tr.message);
          if (run_done) run_done(name, file->file());
          RunSummary rs;
          rs.name = name;
          rs.intervention = label;
          rs.status = tr.status;
          out.push_back(rs);
          continue;
        }
        if (auto m = policy->fitted_mean(); m.defined()) {
          auto sd = policy->fitted_std();
          auto mc = m.contiguous(), sc = sd.contiguous();
          file->file().write(name + "/policy/fitted_mean", mc.data_ptr<double>(), mc.sizes().vec());
          file->file().write(name + "/policy/fitted_std", sc.data_ptr<double>(), sc.sizes().vec());
          file->file().set_attr(name + "/policy", "definition",
                                "fitted-noise statistics [layer, head] at the end of post-training (EMA of final states)");
        }
        if (!spec.save_models.empty()) {
          save_model_dir(model, (fs::path(spec.save_models) / name).string());
          ModelRecord r2 = rec;
          r2.command = "posttrain via experiment spec " + src + " (run " + name + ")";
          write_model_record((fs::path(spec.save_models) / name).string(), r2);
        }
      }
      out.push_back(evaluate_into(model, name, label));
      if (spec.analyses.any() && !cancelled) {
        AnalysisContext ctx{&corpus.validation, spec.T, spec.seed, is_baseline ? PolicySpec{} : ps, tokenizer.get(),
                            [&](const std::string& phase, int64_t done, int64_t total, double loss) {
                              ExperimentProgress p{name, phase, done, total, 0, 0, loss};
                              if (progress && !progress(p)) {
                                cancelled = true;
                                return false;
                              }
                              return true;
                            }};
        run_analyses(model, spec.analyses, ctx, *file, name);
      }
      file->set_status(name, "finished");
      if (run_done) run_done(name, file->file());
    } catch (const Error& e) {
      const std::string st = cancelled ? "cancelled" : "failed";
      file->set_status(name, st, e.what());
      if (run_done) run_done(name, file->file());
      RunSummary rs;
      rs.name = name;
      rs.intervention = label;
      rs.status = st;
      out.push_back(rs);
      if (!cancelled) throw;
    }
  }
  return out;
}

}  // namespace statescope
