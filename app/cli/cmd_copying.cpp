// cmd_copying.cpp — `copying`: train fresh models to copy strings up to L long, one run per
// initial-state policy (default: zero and state passing), evaluate up to 4L, print the table.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/analysis_verb.h"
#include "app/cli/commands.h"
#include "core/analyses/options.h"  // CopyOptions: the defaults
#include "core/base/constants.h"
#include "core/model/model_config.h"  // known_architectures

namespace statescope::cli {

Runner add_copying(CLI::App& app, const std::string& command) {
  struct O {
    std::string output;
    std::vector<std::string> policies{"zero", "passing"};
    std::vector<uint64_t> seeds;
    bool append = false, overwrite = false, replace_run = false;
    CopyOptions c;
    TrainOptions t;
    int pass_conv = 0;
  };
  auto o = std::make_shared<O>();
  o->t.steps = 600; o->t.batch = 32; o->t.lr = 3e-3; o->t.warmup = 30;
  app.add_option("--output,-o", o->output, "experiment file (HDF5) to write")->required();
  app.add_flag("--append", o->append, "add the runs to an existing experiment file");
  app.add_flag("--overwrite", o->overwrite, "replace an existing output file (renamed into place when the runs end)");
  app.add_flag("--replace-run", o->replace_run, "with --append: replace runs of the same names");
  app.add_option("--policies", o->policies, "one run per initial-state policy")
      ->delimiter(',')->check(CLI::IsMember(std::vector<std::string>(std::begin(kPolicyKinds), std::end(kPolicyKinds))))->capture_default_str();
  app.add_option("--L", o->c.L, "longest training string")->capture_default_str();
  app.add_option("--alphabet", o->c.alphabet, "letters in the alphabet (2..26)")->capture_default_str();
  app.add_option("--T", o->c.T, "training window in tokens (0: 2L + 3, the longest example BOS s SEP s EOS)")->capture_default_str()->check(token_count(0));
  app.add_option("--pass-conv", o->pass_conv, "state passing / TBTT hand over the conv state too (1) or the SSM state only (0)")
      ->check(CLI::Range(0, 1))->capture_default_str();
  app.add_option("--examples", o->c.train_docs, "distinct training examples")->capture_default_str();
  app.add_option("--eval-lengths", o->c.eval_lengths, "string lengths to evaluate (default L/2 .. 4L)")->delimiter(',');
  app.add_option("--samples", o->c.eval_samples, "evaluation strings per length")->capture_default_str();
  app.add_option("--seed", o->c.seed)->capture_default_str();
  app.add_option("--seeds", o->seeds, "several seeds: one run per policy and seed (copying_<policy>_s<seed>); the table "
                                      "shows the mean and the range over seeds")->delimiter(',');
  app.add_option("--steps", o->t.steps, "training steps with the policy")->capture_default_str();
  app.add_option("--pretrain-steps", o->c.pretrain_steps,
                 "zero-state steps before the policy's steps (post-training setting; 0: policy from the start)")
      ->capture_default_str();
  app.add_option("--batch", o->t.batch)->capture_default_str();
  app.add_option("--lr", o->t.lr)->capture_default_str();
  app.add_option("--warmup", o->t.warmup)->capture_default_str();
  // The fresh model's shape: pretrain's fields (PretrainShape), only those given (another
  // architecture's field is refused by name).
  auto* arch = app.add_option("--arch", o->c.model.arch, "the fresh model's architecture: " + known_architectures())
                   ->capture_default_str();
  auto* d_model = app.add_option("--d-model", o->c.model.d_model)->capture_default_str();
  auto* n_layer = app.add_option("--n-layer", o->c.model.n_layer)->capture_default_str();
  auto* d_state = app.add_option("--d-state", o->c.model.d_state)->capture_default_str();
  auto* headdim = app.add_option("--headdim", o->c.model.headdim, "Mamba-2")->capture_default_str();
  auto* heads = app.add_option("--heads", o->c.model.num_heads, "GLA and Gated DeltaNet")->capture_default_str();
  return [o, command, arch, d_model, n_layer, d_state, headdim, heads]() {
    if (o->seeds.empty()) o->seeds.push_back(o->c.seed);
    const bool many = o->seeds.size() > 1;
    nlohmann::json model = nlohmann::json::object();
    const auto& m = o->c.model;
    if (arch->count()) model["arch"] = m.arch;
    if (d_model->count()) model["d_model"] = m.d_model;
    if (n_layer->count()) model["n_layer"] = m.n_layer;
    if (d_state->count()) model["d_state"] = m.d_state;
    if (headdim->count()) model["headdim"] = m.headdim;
    if (heads->count()) model["num_heads"] = m.num_heads;
    std::vector<VerbRun> runs;
    for (uint64_t seed : o->seeds)
      for (const auto& kind : o->policies) {
        VerbRun r;
        r.run = "copying_" + kind + (many ? "_s" + std::to_string(seed) : "");
        r.seed = seed;
        r.policy.kind = kind;
        if (kind == "passing" || kind == "tbtt") r.policy.pass_conv = o->pass_conv;
        r.baseline = false;
        r.intervention = r.policy.label();
        r.section = {{"L", o->c.L}, {"alphabet", o->c.alphabet}, {"T", o->c.T}, {"steps", o->t.steps},
                     {"pretrain_steps", o->c.pretrain_steps}, {"batch", o->t.batch}, {"lr", o->t.lr},
                     {"warmup", o->t.warmup}, {"samples", o->c.eval_samples}, {"train_docs", o->c.train_docs}};
        if (!o->c.eval_lengths.empty()) r.section["eval_lengths"] = o->c.eval_lengths;
        if (!model.empty()) r.section["model"] = model;
        r.recorded = r.section;
        r.recorded["policy"] = r.policy.label();
        r.recorded["seed"] = seed;
        runs.push_back(r);
      }
    RunArgs a;
    a.output = o->output, a.append = o->append, a.overwrite = o->overwrite, a.replace_run = o->replace_run;
    // The prose start: the embedded corpus's held-out novel, as a spec on the embedded data has it.
    const auto records = run_analysis_verb(a, command, {.key = "copying", .data = "embedded"}, runs);
    std::vector<std::vector<CopyResult>> table(o->policies.size());  // [policy][seed]
    for (size_t i = 0; i < records.size(); ++i) table[i % o->policies.size()].push_back(*records[i].copying);
    const auto& first = table.front().front();
    std::printf("copying: trained on BOS s SEP s EOS with strings of 1..%lld letters (alphabet %lld, windows of %lld "
                "tokens); exact match, %lld strings per length, greedy from a zero state | from a passed state%s\n%8s",
                (long long)first.L, (long long)first.alphabet, (long long)first.T, (long long)first.samples,
                many ? (", mean [min-max] over " + std::to_string(o->seeds.size()) + " seeds").c_str()
                     : " (per-token accuracy in brackets)",
                "length");
    const int w_col = many ? 40 : 30;
    for (auto& kind : o->policies) std::printf("%*s", w_col, (kind + ": zero | passed").c_str());
    std::printf("\n");
    auto cell = [&](const std::vector<CopyResult>& rs, size_t i, bool passed) {
      double m = 0, lo = 1, hi = 0;
      for (auto& r : rs) {
        const double v = passed ? r.exact_passed[i] : r.exact[i];
        m += v / rs.size(), lo = std::min(lo, v), hi = std::max(hi, v);
      }
      char buf[64];
      if (many) std::snprintf(buf, sizeof buf, "%.2f [%.2f-%.2f]", m, lo, hi);
      else std::snprintf(buf, sizeof buf, "%.2f (%.2f)", m, passed ? rs[0].token_accuracy_passed[i] : rs[0].token_accuracy[i]);
      return std::string(buf);
    };
    for (size_t i = 0; i < first.lengths.size(); ++i) {
      std::printf("%8lld", (long long)first.lengths[i]);
      for (auto& rs : table) std::printf("%*s", w_col, (cell(rs, i, false) + " | " + cell(rs, i, true)).c_str());
      std::printf("%s\n", first.lengths[i] > first.L ? "   > L" : "");
    }
    return 0;
  };
}

}  // namespace statescope::cli
