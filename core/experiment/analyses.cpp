// analyses.cpp — parse the spec's "analyses" section and run each analysis into the run's groups.
#include "core/experiment/analyses.h"

#include <torch/torch.h>

#include <set>

#include "core/base/error.h"
#include "core/analyses/passkey.h"

namespace statescope {
namespace {

using nlohmann::json;

template <class T>
T get(const json& j, const char* key, T dflt, const std::string& src, const std::string& prefix) {
  if (!j.contains(key)) return dflt;
  try {
    return j.at(key).get<T>();
  } catch (const std::exception&) {
    throw Error(src + ": field '" + prefix + key + "' has the wrong type: " + j.at(key).dump());
  }
}

void only(const json& j, const std::set<std::string>& known, const std::string& src, const std::string& prefix) {
  if (!j.is_object()) throw Error(src + ": field '" + prefix.substr(0, prefix.size() - 1) + "' must be an object");
  for (auto& [k, v] : j.items())
    if (!known.count(k)) throw Error(src + ": unknown field '" + prefix + k + "'");
}

void positive(int64_t v, const std::string& src, const std::string& name) {
  if (v <= 0) throw Error(src + ": field '" + name + "' must be > 0, got " + std::to_string(v));
}

}  // namespace

AnalysesSpec parse_analyses(const json& j, const std::string& src) {
  AnalysesSpec a;
  only(j, {"effrem", "states", "passkey", "babi", "copying"}, src, "analyses.");
  if (j.contains("effrem")) {
    const json& e = j["effrem"];
    const std::string p = "analyses.effrem.";
    only(e, {"T", "points", "log", "sequences"}, src, p);
    EffRemOptions o;
    o.Ts = get<std::vector<int64_t>>(e, "T", o.Ts, src, p);
    o.points = get<int64_t>(e, "points", o.points, src, p);
    o.log_grid = get<bool>(e, "log", o.log_grid, src, p);
    o.sequences = get<int64_t>(e, "sequences", o.sequences, src, p);
    if (o.Ts.empty()) throw Error(src + ": field '" + p + "T' needs at least one context length");
    for (auto t : o.Ts) positive(t - 1, src, p + "T (each > 1)");
    positive(o.points, src, p + "points");
    positive(o.sequences, src, p + "sequences");
    a.effrem = o;
  }
  if (j.contains("states")) {
    const json& e = j["states"];
    const std::string p = "analyses.states.";
    only(e, {"positions", "layers", "sequences", "bins", "length", "range"}, src, p);
    StateStatsOptions o;
    o.positions = get<std::vector<int64_t>>(e, "positions", {}, src, p);
    o.layers = get<std::vector<int64_t>>(e, "layers", {}, src, p);
    o.sequences = get<int64_t>(e, "sequences", o.sequences, src, p);
    o.bins = get<int64_t>(e, "bins", o.bins, src, p);
    o.length = get<int64_t>(e, "length", 0, src, p);
    o.range = get<double>(e, "range", 0.0, src, p);
    positive(o.sequences, src, p + "sequences");
    positive(o.bins, src, p + "bins");
    a.states = o;
  }
  if (j.contains("passkey")) {
    const json& e = j["passkey"];
    const std::string p = "analyses.passkey.";
    only(e, {"lengths", "depths", "samples"}, src, p);
    AnalysesSpec::Passkey o;
    o.lengths = get<std::vector<int64_t>>(e, "lengths", {}, src, p);
    o.depths = get<std::vector<double>>(e, "depths", o.depths, src, p);
    o.samples = get<int64_t>(e, "samples", o.samples, src, p);
    for (double d : o.depths)
      if (d < 0 || d > 1) throw Error(src + ": field '" + p + "depths' must be in [0, 1], got " + std::to_string(d));
    positive(o.samples, src, p + "samples");
    a.passkey = o;
  }
  if (j.contains("babi")) {
    const json& e = j["babi"];
    const std::string p = "analyses.babi.";
    only(e, {"lengths", "samples", "facts"}, src, p);
    AnalysesSpec::Babi o;
    o.lengths = get<std::vector<int64_t>>(e, "lengths", o.lengths, src, p);
    o.samples = get<int64_t>(e, "samples", o.samples, src, p);
    o.facts = get<int64_t>(e, "facts", o.facts, src, p);
    positive(o.samples, src, p + "samples");
    positive(o.facts, src, p + "facts");
    a.babi = o;
  }
  if (j.contains("copying")) {
    const json& e = j["copying"];
    const std::string p = "analyses.copying.";
    only(e, {"L", "alphabet", "T", "steps", "batch", "lr", "warmup", "samples", "eval_lengths", "train_docs"}, src, p);
    AnalysesSpec::Copying o;
    o.options.model = default_copy_model();
    o.options.L = get<int64_t>(e, "L", o.options.L, src, p);
    o.options.alphabet = get<int64_t>(e, "alphabet", o.options.alphabet, src, p);
    o.options.T = get<int64_t>(e, "T", 0, src, p);
    o.options.eval_samples = get<int64_t>(e, "samples", o.options.eval_samples, src, p);
    o.options.eval_lengths = get<std::vector<int64_t>>(e, "eval_lengths", {}, src, p);
    o.options.train_docs = get<int64_t>(e, "train_docs", o.options.train_docs, src, p);
    o.train.steps = get<int64_t>(e, "steps", 600, src, p);
    o.train.batch = get<int64_t>(e, "batch", 32, src, p);
    o.train.lr = get<double>(e, "lr", 3e-3, src, p);
    o.train.warmup = get<int64_t>(e, "warmup", 30, src, p);
    positive(o.options.L, src, p + "L");
    if (o.options.alphabet < 2 || o.options.alphabet > 26)
      throw Error(src + ": field '" + p + "alphabet' must be 2..26, got " + std::to_string(o.options.alphabet));
    positive(o.train.steps, src, p + "steps");
    positive(o.train.batch, src, p + "batch");
    positive(o.options.eval_samples, src, p + "samples");
    a.copying = o;
  }
  return a;
}

void run_analyses(Mamba2LM& model, const AnalysesSpec& spec, const AnalysisContext& ctx, ExperimentFile& file,
                  const std::string& run) {
  auto tick = [&](const std::string& phase, int64_t done, int64_t total, double loss) {
    if (ctx.progress && !ctx.progress(phase, done, total, loss)) throw Error(phase + " cancelled");
  };
  if (spec.effrem) {
    auto r = effective_remembrance(model, *ctx.validation, *spec.effrem,
                                   [&](int64_t d, int64_t t) { tick("effrem", d, t, 0); return true; });
    file.write_effrem(run, r);
  }
  if (spec.states) {
    StateStatsOptions o = *spec.states;
    o.T = ctx.T;
    tick("states", 0, 1, 0);
    file.write_state_stats(run, state_statistics(model, *ctx.validation, o));
  }
  if (spec.passkey) {
    auto lengths = spec.passkey->lengths;
    if (lengths.empty())
      for (int64_t m : {4, 8, 16, 32, 64}) lengths.push_back(std::max<int64_t>(128, m * ctx.T));
    tick("passkey", 0, 1, 0);
    file.write_passkey(run, evaluate_passkey(model, lengths, spec.passkey->depths, spec.passkey->samples, ctx.seed + 3,
                                                    ctx.tokenizer));
  }
  if (spec.babi) {
    tick("babi", 0, 1, 0);
    file.write_babi(run, evaluate_babi(model, spec.babi->lengths, prose_of(*ctx.validation, size_t{16} << 20, ctx.tokenizer),
                                       spec.babi->facts, spec.babi->samples, ctx.seed + 4, ctx.tokenizer));
  }
  if (spec.copying) {
    auto o = spec.copying->options;
    o.seed = ctx.seed;
    auto r = run_copying(o, ctx.policy, spec.copying->train, [&](const StepInfo& s) {
      file.append_train(run + "/copying", s);
      return !ctx.progress || ctx.progress("copying", s.step, s.steps, s.loss);
    });
    if (r.train.status != "finished") throw Error("copying " + r.train.status + ": " + r.train.message);
    file.write_copying(run, r.result);
  }
}

}  // namespace statescope
