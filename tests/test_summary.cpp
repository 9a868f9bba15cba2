// test_summary.cpp — the experiment summary (loss@T..2T, loss far, excess per bin with its standard
// error and state-reset reference, norm far/T) against numbers worked out by hand and against an
// independent computation on random per-sequence losses.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/experiment/experiment.h"

using namespace statescope;

namespace {

// Fills the per-position means from the per-sequence values, as the evaluator writes them.
void means(EvalResult& r) {
  const int64_t L = r.length, n = r.sequences;
  r.nll.assign(L, 0);
  r.windowed_nll.assign(L, 0);
  for (int64_t q = 0; q < n; ++q)
    for (int64_t i = 0; i < L; ++i)
      r.nll[i] += static_cast<double>(r.nll_seq[q * L + i]) / n, r.windowed_nll[i] += static_cast<double>(r.windowed_seq[q * L + i]) / n;
}

}  // namespace

TEST(Summary, HandWorkedNumbers) {
  // T = 2, 8 positions, 2 sequences: losses 1 and 3 nats everywhere, the reference 1 nat; one layer
  // whose norm is 2 at position T-1 and 6 over the last half.
  EvalResult r;
  r.T = 2; r.length = 8; r.sequences = 2; r.n_layer = 1;
  r.nll_seq.assign(16, 1.f);
  for (int i = 8; i < 16; ++i) r.nll_seq[i] = 3.f;
  r.windowed_seq.assign(16, 1.f);
  r.norm = {1, 2, 9, 9, 6, 6, 6, 6};
  means(r);
  const auto s = summarize(r, "run", "zero");
  const double bits = 1 / std::log(2.0);
  ASSERT_EQ(s.bins, (std::vector<std::pair<int64_t, int64_t>>{{2, 4}, {4, 8}}));
  EXPECT_NEAR(s.loss_near, 2 * bits, 1e-12);   // mean of 1 and 3
  EXPECT_NEAR(s.loss_far, 2 * bits, 1e-12);
  ASSERT_EQ(s.excess.size(), 2u);
  ASSERT_EQ(s.reference.size(), 2u);
  for (int b = 0; b < 2; ++b) {
    EXPECT_NEAR(s.excess[b], 1 * bits, 1e-12);     // excesses 0 and 2: mean 1
    EXPECT_NEAR(s.excess_se[b], 1 * bits, 1e-12);  // sample std sqrt(2), over sqrt(2 sequences)
    EXPECT_NEAR(s.reference[b], 1 * bits, 1e-12);
  }
  EXPECT_NEAR(s.norm_ratio, 3.0, 1e-12);
  const std::string table = format_summary_table({s});
  EXPECT_NE(table.find("exc 2-4 (ref)"), std::string::npos) << table;
  EXPECT_NE(table.find("+1.443±1.443 (1.443)"), std::string::npos) << table;
}

TEST(Summary, AgreesWithAnIndependentComputation) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(0.5f, 4.f);
  EvalResult r;
  r.T = 5; r.length = 53; r.sequences = 7; r.n_layer = 3;
  const int64_t L = r.length, n = r.sequences, T = r.T;
  for (int64_t i = 0; i < n * L; ++i) r.nll_seq.push_back(u(rng)), r.windowed_seq.push_back(u(rng));
  for (int64_t i = 0; i < r.n_layer * L; ++i) r.norm.push_back(u(rng));
  means(r);
  const auto s = summarize(r, "run", "zero");
  const double bits = 1 / std::log(2.0);
  // Bins by hand: [5,10) [10,20) [20,40) [40,53).
  const std::vector<std::pair<int64_t, int64_t>> want{{5, 10}, {10, 20}, {20, 40}, {40, 53}};
  ASSERT_EQ(s.bins, want);
  for (size_t b = 0; b < want.size(); ++b) {
    const auto [lo, hi] = want[b];
    // Per-sequence mean excess in the bin, then mean and standard error over sequences.
    std::vector<double> x;
    double ref = 0;
    for (int64_t q = 0; q < n; ++q) {
      double d = 0;
      for (int64_t i = lo; i < hi; ++i) d += static_cast<double>(r.nll_seq[q * L + i]) - r.windowed_seq[q * L + i];
      x.push_back(d / (hi - lo));
    }
    for (int64_t i = lo; i < hi; ++i) ref += r.windowed_nll[i] / (hi - lo);  // via the position means
    double m = 0;
    for (double v : x) m += v / n;
    double ss = 0;
    for (double v : x) ss += (v - m) * (v - m);
    EXPECT_NEAR(s.excess[b], m * bits, 1e-9) << "bin " << b;
    EXPECT_NEAR(s.excess_se[b], std::sqrt(ss / (n - 1)) / std::sqrt(double(n)) * bits, 1e-9) << "bin " << b;
    EXPECT_NEAR(s.reference[b], ref * bits, 1e-9) << "bin " << b;
  }
  double near = 0, far = 0;
  for (int64_t i = T; i < 2 * T; ++i) near += r.nll[i] / T;
  for (int64_t i = L / 2; i < L; ++i) far += r.nll[i] / (L - L / 2);
  EXPECT_NEAR(s.loss_near, near * bits, 1e-9);
  EXPECT_NEAR(s.loss_far, far * bits, 1e-9);
  double at = 0, fr = 0;  // summed over layers: mean far norm / norm at T-1
  for (int64_t l = 0; l < r.n_layer; ++l) {
    at += r.norm[l * L + T - 1];
    for (int64_t i = L / 2; i < L; ++i) fr += r.norm[l * L + i] / (L - L / 2);
  }
  EXPECT_NEAR(s.norm_ratio, fr / at, 1e-12);
}

// One yardstick (the loaded model's state-reset loss on the same bytes) against a reference that
// moves with the policy. Oracles: a run whose short-context loss gets worse while its long-context
// loss stays shows a per-run "gain" but exactly zero gain against the one yardstick; a run whose
// long-context loss falls by 0.2 nats shows exactly that gain against it.
TEST(Summary, OneYardstickDoesNotMoveWithThePolicy) {
  EvalResult base;
  base.T = 2, base.length = 8, base.sequences = 3;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(1.0f, 3.0f);
  for (int64_t i = 0; i < base.sequences * base.length; ++i) base.nll_seq.push_back(u(rng)), base.windowed_seq.push_back(u(rng));
  means(base);
  base.fixed_seq = base.windowed_seq;  // the baseline's own reference is the yardstick
  EvalResult worse_short = base;       // post-training hurt the short context only
  for (auto& w : worse_short.windowed_seq) w += 0.5f;
  means(worse_short);
  EvalResult better_long = base;       // post-training helped the long context
  for (auto& x : better_long.nll_seq) x -= 0.2f;
  means(better_long);
  const auto b = summarize(base, "base", "none"), w = summarize(worse_short, "w", "passing"),
             l = summarize(better_long, "l", "passing");
  ASSERT_EQ(b.excess.size(), b.bins.size());
  ASSERT_TRUE(b.fixed && w.fixed && l.fixed);
  const double k = 1.0 / std::log(2.0);
  for (size_t i = 0; i < b.bins.size(); ++i) {
    EXPECT_NEAR(b.own_excess[i], b.excess[i], 1e-12) << "the baseline's own reference is the yardstick";
    EXPECT_NEAR(w.own_excess[i], b.excess[i] - 0.5 * k, 1e-6) << "measured against its own reference: a false gain";
    EXPECT_NEAR(w.excess[i], b.excess[i], 1e-12) << "against the yardstick: no gain";
    EXPECT_NEAR(w.excess_se[i], b.excess_se[i], 1e-12);
    EXPECT_NEAR(w.reference[i], b.reference[i], 1e-12) << "one reference for every run";
    EXPECT_NEAR(l.excess[i], b.excess[i] - 0.2 * k, 1e-6) << "a real gain shows in full";
  }
  // The table reads the excess against the yardstick; the run that also has its own reference gets a
  // second table against that (the baseline's own is the yardstick: not repeated).
  const std::string table = format_summary_table({b, w, l});
  EXPECT_NE(table.find("one reference for every run"), std::string::npos) << table;
  EXPECT_NE(table.find("own 2-4 (ref)"), std::string::npos) << table;
  const std::string own = table.substr(table.find("own 2-4 (ref)"));
  EXPECT_NE(own.find("\nw "), std::string::npos) << own;
  EXPECT_EQ(own.find("\nbase "), std::string::npos) << own;
  // A post-trained run scored without its own reference (the default): the same excess, no own table.
  EvalResult lean = worse_short;
  lean.windowed_seq.clear(), lean.windowed_nll.clear();
  const auto wl = summarize(lean, "w", "passing");
  EXPECT_EQ(wl.excess, w.excess);
  EXPECT_TRUE(wl.own_excess.empty());
  EXPECT_EQ(format_summary_table({b, wl}).find("own 2-4"), std::string::npos);
  // No yardstick (a lone evaluation): the run's own reference, said so.
  EvalResult none = base;
  none.fixed_seq.clear();
  const auto n = summarize(none, "n", "none");
  EXPECT_FALSE(n.fixed);
  EXPECT_EQ(n.excess, b.own_excess);
  const std::string lone = format_summary_table({n});
  EXPECT_NE(lone.find("the state-reset windowed loss"), std::string::npos) << lone;
  EXPECT_EQ(lone.find("own 2-4"), std::string::npos) << lone;
}

TEST(Summary, SweepTableReadsEachGroupOverItsSeeds) {
  // Two seeds of one setting: loss near T 2 and 4, far excess +0.1 and +0.3, norm growth 1 and 3.
  // Mean 3, half-width t(0.975, 1) x sd / sqrt(2) = 12.706 x 1.414 / 1.414 = 12.706 for loss near T.
  std::vector<RunSummary> runs(3);
  runs[2].name = "baseline", runs[2].status = "finished", runs[2].excess = {0.0, 0.5}, runs[2].fixed = true;
  runs[2].loss_near = 2.25;
  EXPECT_EQ(format_sweep_table({runs[2]}), "") << "no swept run: no sweep table";
  for (int s = 0; s < 2; ++s) {
    auto& r = runs[s];
    r.name = "zero@seed=" + std::to_string(s), r.group = "zero", r.status = "finished";
    r.cell = {{"seed", double(s)}};
    r.loss_near = 2 + 2 * s, r.loss_far = 1, r.norm_ratio = 1 + 2 * s;
    r.excess = {0.0, 0.1 + 0.2 * s};
    r.fixed = true;
  }
  const std::string table = format_sweep_table(runs);
  EXPECT_NE(table.find("loss T..2T"), std::string::npos) << table;
  EXPECT_NE(table.find("3.000 ±12.706 [2.000, 4.000]"), std::string::npos) << table;  // loss near T
  EXPECT_NE(table.find("+0.200 ±1.271 [+0.100, +0.300]"), std::string::npos) << table;  // excess far vs base
  EXPECT_NE(table.find("excess far vs base"), std::string::npos) << table;
  const size_t at = table.find("\nbaseline ");  // the run outside the grid: a group of one, after the swept group
  ASSERT_NE(at, std::string::npos) << table;
  const std::string line = table.substr(at + 1, table.find('\n', at + 1) - at - 1);
  EXPECT_NE(line.find(" 1 "), std::string::npos) << line;
  EXPECT_NE(line.find("+0.500"), std::string::npos) << line;
  EXPECT_NE(line.find("2.250"), std::string::npos) << line;
}
