// test_decay.cpp — decay timescales (core/analyses/decay/): oracle models whose every token's decay
// is known (dt pinned by a clamp or a constant projection, A set per head or channel group) put all
// of each group's tokens into the bin of its own memory length -1/(dt A), for Mamba-2 and Mamba-1;
// the per-token log decay the forward returns equals dt * A from the parameters.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <random>

#include "core/analyses/decay/decay.h"
#include "core/base/error.h"
#include "core/model/mamba1/model.h"
#include "core/model/mamba2/model.h"

using namespace statescope;

namespace {

std::vector<Document> random_docs(int n, int vocab) {
  std::mt19937_64 rng(5);
  std::vector<int32_t> ids;
  for (int t = 0; t < n; ++t) ids.push_back(static_cast<int32_t>(rng() % vocab));
  return {{"d", ids}};
}

// Every (layer, group) puts all its tokens, near and far, in the bin holding want[group]; the
// median lies in that bin.
void all_in_own_bin(const DecayResult& r, const std::vector<double>& want) {
  const size_t nb = r.bin_edges.size() - 1;
  for (int64_t l = 0; l < r.n_layer; ++l)
    for (int64_t g = 0; g < r.groups; ++g) {
      const double x = std::log10(want[g]);
      size_t k = 0;
      while (k + 1 < nb && r.bin_edges[k + 1] <= x) ++k;
      const size_t cell = static_cast<size_t>(l * r.groups + g);
      EXPECT_NEAR(r.near[cell * nb + k], 1.0, 1e-12) << "layer " << l << " group " << g;
      EXPECT_NEAR(r.far[cell * nb + k], 1.0, 1e-12) << "layer " << l << " group " << g;
      for (double m : {r.median_near[cell], r.median_far[cell]}) {
        EXPECT_GE(std::log10(m), r.bin_edges[k] - 1e-9);
        EXPECT_LE(std::log10(m), r.bin_edges[k + 1] + 1e-9);
      }
    }
}

}  // namespace

TEST(Decay, Mamba2EveryTokenInItsHeadsBin) {
  Mamba2Config c;
  c.d_model = 32, c.n_layer = 2, c.d_state = 8, c.headdim = 8, c.vocab_size = 64, c.chunk_size = 16;
  c.dt_limit_lo = 0.001, c.dt_limit_hi = 0.02;  // softplus(huge) clamps to 0.02 at every token
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(3);
  const int64_t H = c.nheads();
  std::vector<double> want;
  {
    torch::NoGradGuard ng;
    for (auto& p : m->named_parameters()) {
      if (p.key().find("dt_bias") != std::string::npos) p.value().fill_(50.0);
      if (p.key().find("A_log") != std::string::npos)
        for (int64_t h = 0; h < H; ++h) p.value()[h] = std::log(std::pow(2.0, double(h) - 1));  // A = -2^(h-1)
    }
  }
  for (int64_t h = 0; h < H; ++h) want.push_back(1.0 / (0.02 * std::pow(2.0, double(h) - 1)));  // 100, 50, 25, ...
  // The forward's log decay is dt * A, per head, on every path.
  ForwardOptions fo;
  fo.log_decay = true;
  auto toks = torch::randint(0, 64, {2, 37}, torch::kInt64);
  for (ScanImpl s : {ScanImpl::Chunked, ScanImpl::Fused, ScanImpl::Sequential}) {
    fo.scan = s;
    auto out = m->forward(toks, nullptr, fo);
    ASSERT_EQ(out.log_decay.sizes(), (std::vector<int64_t>{2, 2, 37, H}));
    for (int64_t h = 0; h < H; ++h)  // float32: to its rounding
      for (double v : {out.log_decay.select(3, h).max().item<double>(), out.log_decay.select(3, h).min().item<double>()})
        EXPECT_NEAR(v, -1.0 / want[h], 1e-6 / want[h]) << "head " << h;
  }
  DecayOptions o;
  o.T = 16, o.length = 100, o.sequences = 3, o.segment = 33;
  auto r = decay_timescales(m, random_docs(2000, 64), o);
  EXPECT_EQ(r.n_layer, 2);
  EXPECT_EQ(r.groups, H);
  EXPECT_EQ(r.group_name, "head");
  all_in_own_bin(r, want);
}

TEST(Decay, Mamba1EveryTokenInItsChannelGroupsBin) {
  Mamba1Config c;
  c.d_model = 64, c.n_layer = 1, c.d_state = 4, c.vocab_size = 40;  // d_inner 128: 2 groups of 64
  RecurrentLM m = Mamba1LM(c);
  m->reset_parameters(2);
  const double dt = std::log1p(std::exp(-3.0));  // softplus(-3)
  {
    torch::NoGradGuard ng;
    auto params = m->named_parameters();
    params["backbone.layers.0.mixer.dt_proj.weight"].zero_();
    params["backbone.layers.0.mixer.dt_proj.bias"].fill_(-3.0);
    auto A_log = params["backbone.layers.0.mixer.A_log"];  // [d_inner, d_state]
    const int64_t Di = c.d_inner();
    for (int64_t d = 0; d < Di; ++d) A_log[d].fill_(std::log(d < Di / 2 ? 1.0 : 8.0));  // group 0: A = -1, 1: -8
  }
  ASSERT_EQ(m->state_layout().groups, 2);
  DecayOptions o;
  o.T = 8, o.length = 40, o.sequences = 2;
  auto r = decay_timescales(m, random_docs(500, 40), o);
  EXPECT_EQ(r.group_name, "channel group");
  all_in_own_bin(r, {1.0 / dt, 1.0 / (8.0 * dt)});
}

TEST(Decay, BadOptionsAreRefused) {
  Mamba2Config c;
  c.d_model = 16, c.n_layer = 1, c.d_state = 4, c.headdim = 8, c.vocab_size = 32, c.chunk_size = 8;
  RecurrentLM m = Mamba2LM(c);
  DecayOptions o;
  o.bins = 2;
  EXPECT_THROW(decay_timescales(m, random_docs(200, 32), o), Error);
}

TEST(Decay, HistogramMedianInterpolatesInsideItsBin) {
  const std::vector<double> edges{0, 1, 2, 3};
  const double h[] = {0.25, 0.5, 0.25};
  EXPECT_NEAR(histogram_median(h, edges), std::pow(10.0, 1.5), 1e-9);
  const double one[] = {0, 0, 1};
  EXPECT_NEAR(histogram_median(one, edges), std::pow(10.0, 2.5), 1e-9);
  const double none[] = {0, 0, 0};
  EXPECT_TRUE(std::isnan(histogram_median(none, edges)));
}
