// test_effrem.cpp — Effective Remembrance: TV on hand-built distributions, 0 at t = 0, within
// [0, 1], and 0 for every t < T on a model whose state is reset at every token.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

#include "core/analyses/effrem/effrem.h"
#include "tests/test_util.h"

using namespace statescope;

namespace {

std::vector<Document> random_docs() {
  std::mt19937_64 rng(4);
  std::vector<int32_t> ids;
  for (int t = 0; t < 5000; ++t) ids.push_back(static_cast<int32_t>(rng() % 256));
  return {{"d", ids}};
}

RecurrentLM tiny_model(uint64_t seed) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(seed, 0.05, 0.5);  // long memory
  return m;
}

}  // namespace

TEST(EffRem, TotalVariationOnHandBuiltDistributions) {
  auto p = torch::tensor({{0.5, 0.5, 0.0}, {1.0, 0.0, 0.0}, {0.2, 0.3, 0.5}}, torch::kFloat64);
  auto q = torch::tensor({{0.5, 0.5, 0.0}, {0.0, 0.0, 1.0}, {0.3, 0.3, 0.4}}, torch::kFloat64);
  auto tv = total_variation(p, q);
  EXPECT_DOUBLE_EQ(tv[0].item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(tv[1].item<double>(), 1.0);  // disjoint supports
  EXPECT_NEAR(tv[2].item<double>(), 0.1, 1e-15);
}

TEST(EffRem, GridIncludesZeroAndTheLastPosition) {
  auto g = effrem_grid(64, 8, true);
  EXPECT_EQ(g.front(), 0);
  EXPECT_EQ(g.back(), 63);
  EXPECT_TRUE(std::is_sorted(g.begin(), g.end()));
  EXPECT_EQ(effrem_grid(64, 8, false).back(), 63);
}

TEST(EffRem, ZeroAtStartAndBoundedAndDecreasing) {
  auto m = tiny_model(1);
  EffRemOptions o;
  o.Ts = {16, 48};
  o.points = 8;
  o.sequences = 6;
  auto r = effective_remembrance(m, random_docs(), o);
  const int64_t nt = r.t.size();
  EXPECT_EQ(r.value[0], 0.0);                        // t = 0: the same context
  EXPECT_EQ(r.value[nt], 0.0);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < nt; ++j) {
      const double v = r.value[i * nt + j];
      if (r.t[j] >= r.T[i]) EXPECT_TRUE(std::isnan(v));
      else EXPECT_TRUE(v >= 0.0 && v <= 1.0) << v;
    }
  EXPECT_GT(r.value[nt + nt - 1], 1e-3);              // dropping 47 of 48 tokens changes the prediction
  // Cost accounting: N * sum over grid points (T - t), plus the full contexts.
  int64_t want = 0;
  for (auto T : r.T) {
    want += 6 * T;
    for (auto t : r.t)
      if (t < T) want += 6 * (T - t);
  }
  EXPECT_EQ(r.forward_tokens, want);
}

TEST(EffRem, ZeroForEveryTruncationWhenTheStateResetsAtEveryToken) {
  auto m = tiny_model(2);
  {
    torch::NoGradGuard ng;
    for (auto& p : m->named_parameters()) {
      if (p.key().find("A_log") != std::string::npos) p.value().fill_(6.0);    // A = -403
      if (p.key().find("dt_bias") != std::string::npos) p.value().fill_(10.0);  // dt ~ 10: exp(dt A) = 0
      if (p.key().find("conv1d.weight") != std::string::npos)
        p.value().narrow(2, 0, 3).zero_();                                        // conv sees only token t
    }
  }
  EffRemOptions o;
  o.Ts = {16, 40};
  o.points = 10;
  o.sequences = 4;
  auto r = effective_remembrance(m, random_docs(), o);
  for (size_t i = 0; i < r.value.size(); ++i)
    if (!std::isnan(r.value[i])) EXPECT_LT(r.value[i], 1e-6) << "t index " << i % r.t.size();
}
