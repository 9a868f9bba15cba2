// test_unexplored.cpp — the unexplored-states detector (core/analyses/unexplored/unexplored.h). Oracles: states
// drawn from the distribution the envelope was fitted to fall outside at about 1 - quantile, states
// far from it all fall outside, and a constant training set admits only itself; the rank
// correlation against hand-worked values; on the embedded model (trained at T = 32 from zero states,
// known to fail past T) states within T stay inside and states far past T leave; the result
// round-trips through the experiment file.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <set>

#include "core/analyses/eval/evaluate.h"
#include "core/base/error.h"
#include "core/model/checkpoint.h"
#include "core/analyses/unexplored/unexplored.h"
#include "core/data/corpus.h"
#include "core/model/model_registry.h"
#include "core/store/experiment_store.h"
#include "core/experiment/experiment.h"
#include "core/train/state_policy.h"
#include "core/train/trainer.h"
#include "tests/through_file.h"
#include "tests/scratch.h"
#include "core/analyses/unexplored/record.h"

using namespace statescope;

namespace {

// [n, H, D]: a low-rank Gaussian plus isotropic noise, different per head.
torch::Tensor gaussian_states(int64_t n, uint64_t seed, double scale = 1.0, double shift = 0.0) {
  auto g = at::detail::createCPUGenerator(seed);
  const int64_t H = 2, D = 24, r = 4;
  auto basis = at::normal(0.0, 1.0, {H, r, D}, at::detail::createCPUGenerator(99));  // fixed across calls
  auto z = at::normal(0.0, 1.0, {n, H, r}, g) * torch::tensor({3.0, 2.0, 1.0, 0.5}).view({1, 1, r});
  auto x = torch::einsum("nhr,hrd->nhd", {z, basis}) + at::normal(0.0, 0.1, {n, H, D}, g);
  return ((x + shift) * scale).to(torch::kFloat32);
}

double outside(const StateEnvelope& e, const torch::Tensor& x) {
  return (e.score(x) > e.threshold()).to(torch::kFloat64).mean().item<double>();
}

// The embedded model (trained from zero states at T = 32) and the corpus it was trained on.
struct EmbeddedAndAusten {
  RecurrentLM model;
  Corpus corpus;
};
EmbeddedAndAusten embedded_and_austen() {
  return {load_model_dir(resolve_model("embedded"), default_compute()), load_austen(default_corpus_path())};
}

// A short experiment on the embedded model: baseline and state passing, with the detector.
const char* const kPassingWithDetector = R"({"model": "embedded", "seed": 0, "posttrain": {"steps": 3, "batch": 4, "warmup": 1},
    "policies": [{"kind": "passing"}], "eval": {"length": 128, "sequences": 2, "segment": 64, "batch": 2},
    "analyses": {"unexplored": {"train_steps": 3, "samples": 60, "stride": 16, "bootstrap": 10}}})";

}  // namespace

TEST(Unexplored, EnvelopeAdmitsItsDistributionAndRejectsOthers) {
  StateEnvelope e(gaussian_states(4000, 1), 8, 0.99);
  EXPECT_EQ(e.components(), 8);
  // The held-out check and fresh draws from the same distribution: about 1% outside.
  for (int64_t h = 0; h < 2; ++h) EXPECT_LE(e.heldout_outside()[h].item<double>(), 0.05);
  const double same = outside(e, gaussian_states(4000, 2));
  std::printf("[ info ] same distribution %.4f outside, 10x larger %.4f, shifted %.4f\n", same,
              outside(e, gaussian_states(1000, 3, 10.0)), outside(e, gaussian_states(1000, 4, 1.0, 2.0)));
  EXPECT_GT(same, 0.002);
  EXPECT_LT(same, 0.03);
  EXPECT_GT(outside(e, gaussian_states(1000, 3, 10.0)), 0.99);      // states 10x larger: all outside
  EXPECT_GT(outside(e, gaussian_states(1000, 4, 1.0, 2.0)), 0.99);  // off the subspace: all outside

  // A training set of one state (all zeros, as zero-state training's starts): only it is inside.
  StateEnvelope z(torch::zeros({200, 2, 24}), 8, 0.99);
  EXPECT_EQ(outside(z, torch::zeros({5, 2, 24})), 0.0);
  EXPECT_EQ(outside(z, torch::full({5, 2, 24}, 1e-3)), 1.0);
  EXPECT_THROW(StateEnvelope(torch::zeros({20, 2, 24}), 8, 0.99), Error);
}

TEST(Unexplored, SpearmanAgainstHandWorkedValues) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // ranks x (1, 2, 3, 4, 5), y (2, 1, 4, 3, 5): 1 - 6 * 4 / (5 * 24) = 0.8
  EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}), 0.8, 1e-12);
  // ties take the mean rank: y ranks (1.5, 1.5, 3) against (1, 2, 3) -> Pearson 0.8660...
  EXPECT_NEAR(spearman({1, 2, 3}, {5, 5, 7}), std::sqrt(3.0) / 2, 1e-12);
  EXPECT_TRUE(std::isnan(spearman({1, 2}, {1, 2})));
  EXPECT_TRUE(std::isnan(spearman({1, 1, 1}, {1, 2, 3})));
}

// The embedded model was trained from zero states at T = 32 and fails past T (test_eval): its states
// within T are the ones training met; far past T they are not.
TEST(Unexplored, EmbeddedModelLeavesItsTrainingStatesPastT) {
  auto [model, corpus] = embedded_and_austen();
  UnexploredOptions o;
  o.T = 32, o.length = 1024, o.sequences = 8, o.stride = 16, o.train_steps = 40, o.train_batch = 16;
  o.samples = 1000, o.bootstrap = 100;
  EvalOptions eo;
  eo.T = 32, eo.length = 1024, eo.sequences = 8, eo.segment = 256, eo.batch = 8;
  const auto eval = evaluate_positions(model, corpus.validation, eo);
  const auto r = unexplored_states(model, corpus.train, corpus.validation, PolicySpec{}, o, 1, &eval);
  ASSERT_EQ(r.positions.size(), 64u);
  EXPECT_EQ(r.positions.front(), 15);
  double within = 0, far = 0;
  for (size_t j = 0; j < 2; ++j) within += r.outside_mean[j] / 2;   // after 16 and 32 tokens
  for (size_t j = 32; j < 64; ++j) far += r.outside_mean[j] / 32;   // positions 512-1023
  std::printf("[ info ] embedded: outside within T %.3f, at 16T-32T %.3f; held-out %.3f; rho %.2f [%.2f, %.2f]\n",
              within, far, r.heldout_outside[0], r.excess_rho, r.excess_rho_lo, r.excess_rho_hi);
  EXPECT_LT(within, 0.1);
  EXPECT_GT(far, 0.5);
  for (double h : r.heldout_outside) EXPECT_LE(h, 0.1);
  EXPECT_TRUE(std::isnan(r.excess[0]));  // below T: no excess
  EXPECT_FALSE(std::isnan(r.excess[2]));
  ASSERT_TRUE(std::isfinite(r.excess_rho));
  EXPECT_LE(r.excess_rho_lo, r.excess_rho);
  EXPECT_GE(r.excess_rho_hi, r.excess_rho);

  // Through the file and back, every dataset the size its axes make it.
  const auto back = statescope::test::through_file("statescope_unexplored.h5", r, write_unexplored, read_unexplored);
  EXPECT_EQ(back.outside, r.outside);
  EXPECT_EQ(back.positions, r.positions);
  EXPECT_EQ(back.excess_rho, r.excess_rho);
  EXPECT_EQ(back.train_samples, r.train_samples);
  EXPECT_EQ(back.quantile, r.quantile);
}

// The trainer reports what each step started from and ended at; a policy run's envelope includes
// those recorded states (with each step's weights), the baseline's only replayed ones.
TEST(Unexplored, PostTrainingStatesAreRecordedIntoTheEnvelope) {
  auto [model, corpus] = embedded_and_austen();
  TrainOptions t;
  t.T = 32, t.steps = 3, t.batch = 4, t.warmup = 1;
  auto policy = make_policy(PolicySpec{}, 1);
  int calls = 0;
  train(model, corpus.train, *policy, t, {}, {}, [&](const ModelState& initial, const ModelState& final_state) {
    ++calls;
    ASSERT_EQ(initial.size(), 2u);
    EXPECT_EQ(initial[0].ssm.sizes(), final_state[0].ssm.sizes());
    EXPECT_EQ(initial[0].ssm.abs().max().item<double>(), 0.0);  // the zero policy starts from zeros
    EXPECT_GT(final_state[0].ssm.abs().max().item<double>(), 0.0);
    EXPECT_FALSE(final_state[0].ssm.requires_grad());
  });
  EXPECT_EQ(calls, 3);

  const auto out = statescope::test::scratch("statescope_unexplored_recorded.h5");
  run_experiment(kPassingWithDetector, "recorded.json", out, {}, {}, true, 1);
  H5File f(out, H5File::Mode::Read);
  EXPECT_EQ(read_unexplored(f, "baseline").recorded_samples, 0);
  const auto p = read_unexplored(f, "passing");
  EXPECT_EQ(p.recorded_samples, 3 * 4 * 2);  // 3 steps x 4 rows x (start, end)
  EXPECT_EQ(p.train_samples, 60 + 24);
}

// The common yardstick (issue 29, point 5): every run's states scored against one envelope, the
// loaded model's zero-state training states. Oracles: the loaded model's own states against the
// envelope of its own zero-state replay score exactly as its own envelope does (it is the same
// envelope); against an envelope fitted to states moved far off, every state is outside. In an
// experiment the baseline's common and own fractions are equal, every run carries the common one,
// and the excess is measured against the one yardstick.
TEST(Unexplored, CommonEnvelopeIsOneYardstickForEveryRun) {
  auto [model, corpus] = embedded_and_austen();
  UnexploredOptions o;
  o.T = 32, o.length = 256, o.sequences = 4, o.stride = 16, o.train_steps = 8, o.train_batch = 8;
  o.samples = 200, o.bootstrap = 20;
  const auto same = zero_state_envelopes(model, corpus.train, o, 7);
  const auto r = unexplored_states(model, corpus.train, corpus.validation, PolicySpec{}, o, 7, nullptr, {}, nullptr, &same);
  ASSERT_EQ(r.common_outside.size(), r.outside.size());
  EXPECT_EQ(r.common_outside, r.outside);  // score 1: the same envelope
  EXPECT_EQ(r.common_outside_mean, r.outside_mean);
  // Score 0: an envelope of states far from any the model reaches.
  auto states = training_states(model, corpus.train, PolicySpec{}, o, 7);
  for (auto& s : states) s = s * 50.0 + 100.0;
  const auto far = fit_envelopes(states, o);
  const auto q = unexplored_states(model, corpus.train, corpus.validation, PolicySpec{}, o, 7, nullptr, {}, nullptr, &far);
  for (double v : q.common_outside_mean) EXPECT_EQ(v, 1.0);
  EXPECT_EQ(q.outside, r.outside);  // the run's own envelope is untouched by the common one

  const auto out = statescope::test::scratch("statescope_unexplored_common.h5");
  run_experiment(kPassingWithDetector, "common.json", out, {}, {}, true, 2);
  H5File f(out, H5File::Mode::Read);
  const auto b = read_unexplored(f, "baseline"), p = read_unexplored(f, "passing");
  EXPECT_EQ(b.common_outside, b.outside);
  ASSERT_EQ(p.common_outside.size(), p.outside.size());
  EXPECT_EQ(b.excess_reference, "fixed");
  EXPECT_EQ(p.excess_reference, "fixed");
  // Its rank correlation is defined unless the common fraction is flat past T (a tie everywhere).
  std::set<double> past_T;
  for (size_t j = 0; j < p.positions.size(); ++j)
    if (p.positions[j] >= 32) past_T.insert(p.common_outside_mean[j]);
  std::printf("[ info ] passing: common outside past T %s, own %.3f at the end; rho %.2f\n",
              ::testing::PrintToString(past_T).c_str(), p.outside_mean.back(), p.common_rho);
  EXPECT_EQ(std::isfinite(p.common_rho), past_T.size() > 1);
}
