// record.cpp — the unexplored-states detector written and read back, and its `inspect` lines.
#include "core/analyses/unexplored/record.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <ostream>

#include "core/base/json_fields.h"
#include "core/analyses/section.h"
#include "core/store/group_io.h"

namespace statescope {

void write_unexplored(ExperimentFile& file, const std::string& run, const UnexploredResult& r) {
  file.write_group([&](H5File& f) {
    const std::string g = run + "/unexplored";
    const int64_t np = static_cast<int64_t>(r.positions.size()), NL = r.n_layer, H = r.nheads;
    f.write(g + "/position", r.positions.data(), {np});
    f.write(g + "/outside", r.outside.data(), {np, NL, H});
    write_columns(f, g, {{"outside_mean", &r.outside_mean}, {"excess", &r.excess}}, {np});
    f.write(g + "/outside_seq", r.outside_seq.data(), {r.sequences, np});
    write_columns(f, g, {{"heldout_outside", &r.heldout_outside}, {"threshold", &r.threshold}}, {NL, H});
    const std::vector<double> rho{r.excess_rho, r.excess_rho_lo, r.excess_rho_hi}, q{r.quantile};
    f.write(g + "/excess_rho", rho.data(), {3});
    f.write(g + "/quantile", q.data(), {1});
    if (!r.common_outside.empty()) {  // the common yardstick (absent in files from before it)
      f.write(g + "/common_outside", r.common_outside.data(), {np, NL, H});
      write_columns(f, g, {{"common_outside_mean", &r.common_outside_mean}}, {np});
      const std::vector<double> crho{r.common_rho, r.common_rho_lo, r.common_rho_hi};
      f.write(g + "/common_rho", crho.data(), {3});
    }
    describe_group(f, run, "unexplored", "outside_mean", {"position"},
                   "outside[position, layer, head]: fraction of evaluation sequences whose SSM state after the position "
                   "lies outside the envelope of the states met in training (training windows replayed under the run's "
                   "policy; per (layer, head) PCA score T^2/k + Q/E[Q] above the quantile of held-out training scores); "
                   "heldout_outside: the same for training states held out of the fit and the threshold; excess: mean "
                   "excess loss over the stride ending at each position (NaN below T), against the reference the "
                   "excess_reference attribute names (fixed: the loaded model's state-reset loss, one for every run; "
                   "own: the run's); excess_rho: Spearman rank correlation of outside_mean and excess over positions "
                   ">= T, with a 95% interval from resampling sequences; common_outside, common_outside_mean, "
                   "common_rho: the same states against one envelope for every run, the loaded model's states met in "
                   "zero-state training windows (the baseline's own)",
                   {{"T", r.T}, {"length", r.length}, {"sequences", r.sequences}, {"n_layer", NL}, {"nheads", H},
                    {"components", r.components}, {"train_samples", r.train_samples}, {"train_steps", r.train_steps},
                    {"train_batch", r.train_batch}, {"recorded_samples", r.recorded_samples}});
    f.set_attr(g, "excess_reference", r.excess_reference);
  });
}

UnexploredResult read_unexplored(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "unexplored"};
  g.require("outside");
  UnexploredResult r;
  r.positions = g.i64("position");
  r.T = g.attr_int("T"), r.length = g.attr_int("length"), r.sequences = g.attr_int("sequences");
  r.n_layer = g.attr_int("n_layer"), r.nheads = g.attr_int("nheads"), r.components = g.attr_int("components");
  r.train_samples = g.attr_int("train_samples"), r.train_steps = g.attr_int("train_steps");
  r.train_batch = g.attr_int("train_batch");
  r.recorded_samples = g.attr_int("recorded_samples");  // 0 in files from before it was recorded
  const int64_t np = g.count(r.positions.size());
  r.outside = g.f64("outside", g.product({np, r.n_layer, r.nheads}), "[position, layer, head]");
  g.columns({{"outside_mean", &r.outside_mean}, {"excess", &r.excess}}, np, "[position]");
  r.outside_seq = g.f64("outside_seq", g.product({r.sequences, np}), "[sequence, position]");
  g.columns({{"heldout_outside", &r.heldout_outside}, {"threshold", &r.threshold}}, g.product({r.n_layer, r.nheads}),
            "[layer, head]");
  const auto rho = g.f64("excess_rho", 3, "[rho, low, high]");
  r.excess_rho = rho[0], r.excess_rho_lo = rho[1], r.excess_rho_hi = rho[2];
  r.quantile = g.f64("quantile", 1, "[1]")[0];
  r.excess_reference = g.attr_or("excess_reference", "own");  // files from before it: the run's own
  if (r.excess_reference != "own" && r.excess_reference != "fixed") g.fail("attribute excess_reference is \"" + r.excess_reference + "\", not own or fixed");
  r.common_rho = r.common_rho_lo = r.common_rho_hi = std::numeric_limits<double>::quiet_NaN();
  if (g.has("common_outside")) {
    r.common_outside = g.f64("common_outside", g.product({np, r.n_layer, r.nheads}), "[position, layer, head]");
    g.columns({{"common_outside_mean", &r.common_outside_mean}}, np, "[position]");
    const auto c = g.f64("common_rho", 3, "[rho, low, high]");
    r.common_rho = c[0], r.common_rho_lo = c[1], r.common_rho_hi = c[2];
  }
  return r;
}

void inspect_unexplored(const RunRecord& rec, std::ostream& out) {
  const UnexploredResult& u = *rec.unexplored;
  const double held = u.heldout_outside.empty() ? 0.0
                                                : std::accumulate(u.heldout_outside.begin(), u.heldout_outside.end(), 0.0) /
                                                      static_cast<double>(u.heldout_outside.size());
  char buf[400];
  // " [0, T) a [T, 2T) b ...": a per-position fraction's mean in doubling position bins.
  auto binned = [&](const std::vector<double>& frac) {
    for (int64_t lo = 0, hi = std::max<int64_t>(1, u.T); lo < u.length; lo = hi, hi *= 2) {
      double sum = 0;
      int n = 0;
      for (size_t j = 0; j < u.positions.size(); ++j)
        if (u.positions[j] >= lo && u.positions[j] < hi) sum += frac[j], ++n;
      if (n) std::snprintf(buf, sizeof buf, " [%lld, %lld) %.3f", (long long)lo, (long long)std::min(hi, u.length), sum / n),
             out << buf;
    }
  };
  std::snprintf(buf, sizeof buf,
                "  unexplored: fraction of states outside the envelope of the training states (%lld per layer, "
                "%lld components, quantile %.3f; held-out training states outside: %.3f)\n    by position:",
                (long long)u.train_samples, (long long)u.components, u.quantile, held);
  out << buf;
  binned(u.outside_mean);
  const char* against = u.excess_reference == "fixed" ? "the one yardstick" : "the run's own reference";
  std::snprintf(buf, sizeof buf, "\n    Spearman with the excess (against %s) over positions >= T: %.3f (95%% %.3f to %.3f)\n",
                against, u.excess_rho, u.excess_rho_lo, u.excess_rho_hi);
  out << buf;
  if (u.common_outside_mean.empty()) return;
  out << "    against the loaded model's zero-state envelope (one for every run), by position:";
  binned(u.common_outside_mean);
  std::snprintf(buf, sizeof buf, "\n    Spearman with the excess: %.3f (95%% %.3f to %.3f)\n", u.common_rho,
                u.common_rho_lo, u.common_rho_hi);
  out << buf;
}

// "unexplored": the states met in training replayed for the post-training's steps and batch unless
// given; scored on the evaluation's own sequences (its length and count).
UnexploredOptions unexplored_options(const nlohmann::json& section, const std::string& src) {
  const JsonFields f(section, src, "analyses.unexplored.");
  f.only({"stride", "train_steps", "train_batch", "samples", "components", "quantile", "bootstrap"});
  UnexploredOptions o;
  o.train_steps = o.train_batch = 0;  // 0: the spec's posttrain steps and batch
  f.read("stride", o.stride);
  f.read("train_steps", o.train_steps);
  f.read("train_batch", o.train_batch);
  f.read("samples", o.samples);
  f.read("components", o.components);
  f.read("quantile", o.quantile);
  f.read("bootstrap", o.bootstrap);
  if (o.stride < 0) f.fail("stride", "must be >= 0 (0: T/2), got " + std::to_string(o.stride));
  if (o.train_steps < 0) f.fail("train_steps", "must be >= 0 (0: posttrain.steps), got " + std::to_string(o.train_steps));
  if (o.train_batch < 0) f.fail("train_batch", "must be >= 0 (0: posttrain.batch), got " + std::to_string(o.train_batch));
  if (o.samples < 50) f.fail("samples", "must be >= 50, got " + std::to_string(o.samples));
  positive(f, "components", o.components);
  if (!(o.quantile > 0 && o.quantile < 1)) f.fail("quantile", "must be in (0, 1), got " + std::to_string(o.quantile));
  if (o.bootstrap < 0) f.fail("bootstrap", "must be >= 0, got " + std::to_string(o.bootstrap));
  return o;
}

AnalysisRecord record_unexplored() {
  return make_record<&RunResults::unexplored, read_unexplored>(
      "unexplored", "unexplored", "unexplored/outside", "Unexplored states",
      "Unexplored states (envelope of the training states)", true, inspect_unexplored, report_unexplored,
      checked_section<unexplored_options>,
      "The unexplored-states detector: an envelope (Gaussian mixture) of the states met in training windows under the run's policy, then per position the share of states outside it. Cost per run: posttrain's steps of training windows replayed plus a mixture fit with 200 bootstrap rounds: the slowest analysis for large states (about 7 minutes a run for a 4-layer, d_state 64 model on 2 cores).");
}

}  // namespace statescope
