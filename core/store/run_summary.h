// run_summary.h — one line per evaluated run: loss near and far past T, excess per position bin
// against its reference, state-norm growth; and the tables `eval`, `run`, `inspect`, the report and
// the app print from them. No LibTorch, no Qt.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/base/results.h"

namespace statescope {

struct RunSummary {
  std::string name, intervention, status;
  int64_t T = 0;
  double loss_near = 0;                  // mean nll over positions [T, 2T), bits/token (= bits/byte for byte-level models)
  double loss_far = 0;                   // mean nll over the last half of positions, bits/token (= bits/byte for byte-level models)
  std::vector<std::pair<int64_t, int64_t>> bins;  // log-spaced position bins [T,2T), [2T,4T), ...
  // The excess per bin against the run's yardstick: the experiment's one yardstick when the run has
  // it (the loaded model's state-reset loss on the same bytes, EvalResult::fixed_seq: the same for
  // every run, so runs compare), else the run's own state-reset reference (a lone evaluation, or a
  // file from before the one yardstick). `fixed` says which.
  std::vector<double> excess;            // mean excess per bin, bits/token (= bits/byte for byte-level models)
  std::vector<double> excess_se;         // its standard error (over sequences)
  std::vector<double> reference;         // mean reference loss per bin, bits/token: what the excess
                                         // is measured against, so a negative excess can be told
                                         // from a reference that got worse
  bool fixed = false;
  // Against the run's own state-reset reference (EvalResult::windowed_seq), when it was computed
  // beside the one yardstick (the baseline's is the yardstick; others on request: eval.own_reference).
  std::vector<double> own_excess, own_excess_se, own_reference;  // per bin, bits/token
  double norm_ratio = 0;                 // mean layer state norm far (last half) / at position T-1
  std::string group;                     // sweep group: the run's name without its seed (sweep.h)
  std::vector<std::pair<std::string, double>> cell;  // its sweep cell (empty: no sweep)
};

// Whether the run's own state-reset reference says something its table row does not: it was
// measured against the one yardstick and also has its own reference, which differs from it (the
// baseline's own reference is the yardstick itself).
inline bool has_distinct_own_reference(const RunSummary& r) {
  return r.fixed && !r.own_excess.empty() && r.own_excess != r.excess;
}

// Summary of an evaluated run (bits per token: per byte for byte-level models).
RunSummary summarize(const EvalResult& r, const std::string& name, const std::string& intervention);
// The runs' table (excess against each run's yardstick); when runs measured against the one yardstick
// also have their own state-reset reference, a second table of the excess against that.
std::string format_summary_table(const std::vector<RunSummary>& runs);
// A sweep's runs by group (the seeds of one setting): finished runs, the excess in the farthest bin
// and the loss far, mean and [min, max] over the seeds; a run outside the grid (the baseline) is a
// group of one. Empty when no run has a sweep cell.
std::string format_sweep_table(const std::vector<RunSummary>& runs);

}  // namespace statescope
