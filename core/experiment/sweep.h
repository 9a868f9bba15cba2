// sweep.h — a spec's "sweep": numeric fields varied over a grid, every cell a run per policy, seeds
// as an axis whose spread becomes error bars. No LibTorch.
//
//   "sweep": {"seed": [0, 1, 2], "posttrain.steps": [100, 200, 400]}            (a grid: 9 cells)
//   "sweep": {"posttrain.lr": [1e-4, 5e-4], "posttrain.steps": [400, 100], "mode": "list"}  (2 cells)
//
// Fields: seed, T, posttrain.steps, posttrain.batch, posttrain.warmup, posttrain.lr, sigma (random
// policies), fit_length (fitted policies), and with a "pretrain" section its sizes, budget and
// initialisation (PretrainSpec::sweep_fields: pretrain.d_state, pretrain.steps, ...). Each policy runs once per cell of the axes that apply to
// it (sigma only to random, fit_length only to fitted); the baseline once per T (and per seed when
// the spec has analyses, which draw from the seed). A run is named "<policy>@<field>=<value>,..."
// and its group (the same name without the seed) gathers the seeds of one setting. A run of a cell
// is the run of the unswept spec with that cell's values: same seeds, same numbers.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/experiment/spec.h"

namespace statescope {

// Above this many runs the CLI wants --yes and the app asks first.
constexpr size_t kSweepConfirmRuns = 50;
// No spec makes more runs than this.
constexpr size_t kSweepMaxRuns = 10000;

// A spec with a "pretrain" section first trains one model per cell of T, seed and pretrain.* (a
// Pretrain run, named "pretrain@pretrain.d_state=64,seed=1,T=32"); the baseline and every policy of
// that cell run on it (model_key names it), the baseline once per seed too.
// A TrainingFree run is the loaded model run with an intervention (no post-training), once per cell of
// T, seed and the pretraining fields (its calibration draws from the seed).
enum class RunKind { Pretrain, Baseline, Policy, TrainingFree };

struct PlannedRun {
  std::string name;          // "passing" or "passing@posttrain.steps=100,seed=1"
  std::string group;         // the name without its seed (runs that differ only in seed)
  RunKind kind = RunKind::Policy;
  bool baseline = false;     // kind == Baseline
  std::string model_key;     // pretraining spec: the Pretrain run's name whose model this run uses
  PolicySpec policy;         // the policy with this cell's sigma / fit_length
  InterventionSpec intervention;  // TrainingFree: what it changes
  size_t index = 0;          // position in [baseline, policies...]: seeds its policy as the unswept spec would
  ExperimentSpec spec;       // the spec with this cell applied (seed, T, posttrain)
  std::vector<std::pair<std::string, double>> cell;  // the swept values that apply to this run
};

// Every run of `s` in order: the pretraining runs', the baseline's, then each policy's, cells in grid order (fields in
// alphabetical order, as JSON objects keep them; the last varies fastest).
std::vector<PlannedRun> plan_runs(const ExperimentSpec& s);

// "seed=1" style text of one value: whole numbers without a decimal point.
std::string sweep_value_text(double v);

}  // namespace statescope
