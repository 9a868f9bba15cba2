// analyses.cpp — run each analysis of the spec into the run's groups.
#include "core/experiment/analyses.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/analyses/passkey.h"

namespace statescope {

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
    }, ctx.compute);
    if (r.train.status != "finished") throw Error("copying " + r.train.status + ": " + r.train.message);
    file.write_copying(run, r.result);
  }
}

}  // namespace statescope
