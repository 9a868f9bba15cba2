// test_state_stats.cpp — state histograms at chosen positions, fitted Gaussians and the state
// change norm, against states computed directly.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

#include "core/analyses/eval/evaluate.h"
#include "core/analyses/states/state_stats.h"
#include "tests/test_util.h"

using namespace statescope;
using statescope::test::close;

TEST(StateStats, MatchesDirectlyComputedStates) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(7, 0.05, 0.5);
  std::mt19937_64 rng(2);
  std::vector<int32_t> ids;
  for (int t = 0; t < 3000; ++t) ids.push_back(static_cast<int32_t>(rng() % 256));
  std::vector<Document> docs{{"d", ids}};
  StateStatsOptions o;
  o.T = 16; o.length = 100; o.sequences = 3; o.bins = 21; o.segment = 32;
  o.positions = {7, 15, 60, 99};
  o.layers = {1};
  auto r = state_statistics(m, docs, o);
  const int64_t H = c.nheads();  // 8
  ASSERT_EQ(r.histogram.size(), static_cast<size_t>(1 * 4 * H * 21));
  // Direct: run the first p+1 tokens and read the final state.
  auto seqs = eval_sequences(docs, o.length - 1, 3);
  auto toks = torch::empty({3, o.length}, torch::kInt64);
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t t = 0; t < o.length; ++t) toks[s][t] = seqs[s][t];
  torch::NoGradGuard ng;
  for (size_t k = 0; k < o.positions.size(); ++k) {
    const int64_t p = o.positions[k];
    auto S = m->forward(toks.narrow(1, 0, p + 1)).final_state[1].ssm.to(torch::kFloat64);  // [3, H, P, N]
    auto x = S.transpose(0, 1).reshape({H, -1});
    for (int64_t h = 0; h < H; ++h) {
      EXPECT_NEAR(r.mean[k * H + h], x[h].mean().item<double>(), 1e-6);
      EXPECT_NEAR(r.std[k * H + h], x[h].std(0, false).item<double>(), 1e-6);
      // Density integrates to 1 (the automatic range covers every entry).
      double mass = 0;
      for (int64_t b = 0; b < 21; ++b) mass += r.histogram[((k * H) + h) * 21 + b] * (r.bin_edges[1] - r.bin_edges[0]);
      EXPECT_NEAR(mass, 1.0, 1e-9);
    }
    if (p == 15)
      for (int64_t h = 0; h < H; ++h) EXPECT_NEAR(r.fitted_mean[h], r.mean[k * H + h], 1e-12);  // fit at T-1
  }
  // State change norm: ||S_t - S_{t-1}|| from full forwards at t and t-1.
  for (int64_t t : {1, 40, 99}) {
    auto a = m->forward(toks.narrow(1, 0, t + 1)).final_state, b = m->forward(toks.narrow(1, 0, t)).final_state;
    for (int64_t l = 0; l < 2; ++l) {
      auto dn = (a[l].ssm - b[l].ssm).to(torch::kFloat64).square().sum({1, 2, 3}).sqrt().mean().item<double>();
      EXPECT_NEAR(r.delta_norm[l * o.length + t], dn, 1e-5) << "layer " << l << " t " << t;
    }
  }
}
