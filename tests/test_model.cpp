// test_model.cpp — the full Mamba-2 LM: chunked vs sequential (logits, states, norms, gradients,
// including through the initial states), state passing across any split point, dt_limit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "core/base/error.h"
#include "core/model/mamba2/model.h"
#include "tests/test_util.h"

using namespace statescope;
using statescope::test::close;

namespace {

Mamba2Config tiny(int64_t ngroups) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.ngroups = ngroups;
  c.d_conv = 4; c.chunk_size = 16; c.vocab_size = 50; c.tie_embeddings = false;
  return c;
}

// A model whose every parameter is moved away from its init value, so no term hides.
RecurrentLM random_model(const Mamba2Config& c, torch::Dtype dtype, uint64_t seed) {
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(seed);
  m->to(dtype);
  torch::manual_seed(seed);
  torch::NoGradGuard ng;
  for (auto& p : m->parameters()) p.add_(torch::randn_like(p) * 0.1);
  return m;
}

ModelState random_state(const Mamba2Config& c, int64_t b, torch::Dtype dtype, bool requires_grad) {
  ModelState s;
  for (int64_t i = 0; i < c.n_layer; ++i) {
    auto ssm = torch::randn({b, c.nheads(), c.headdim, c.d_state}, dtype);
    auto conv = torch::randn({b, c.conv_dim(), c.d_conv - 1}, dtype);
    s.push_back({ssm.requires_grad_(requires_grad), conv.requires_grad_(requires_grad)});
  }
  return s;
}

struct ModelCase { int64_t L, G; bool init; torch::Dtype dtype; };

class ModelEquivalence : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ModelEquivalence, ChunkedMatchesSequentialWithGradients) {
  const auto p = GetParam();
  const double tol = p.dtype == torch::kFloat64 ? 1e-5 : 1e-4;
  auto cfg = tiny(p.G);
  auto model = random_model(cfg, p.dtype, 11 + p.L);
  torch::manual_seed(3);
  auto tokens = torch::randint(0, cfg.vocab_size, {2, p.L}, torch::kInt64);
  auto init = random_state(cfg, 2, p.dtype, true);
  const ModelState* ip = p.init ? &init : nullptr;

  ForwardOptions seq{ScanImpl::Sequential, 0, true}, chk{ScanImpl::Chunked, 0, true};
  auto ref = model->forward(tokens, ip, seq);
  auto got = model->forward(tokens, ip, chk);
  EXPECT_TRUE(close(got.logits, ref.logits, tol, "logits"));
  EXPECT_TRUE(close(got.norm_per_head, ref.norm_per_head, tol, "norm per head"));
  EXPECT_TRUE(close(got.norm, ref.norm, tol, "norm"));
  for (int64_t i = 0; i < cfg.n_layer; ++i) {
    EXPECT_TRUE(close(got.final_state[i].ssm, ref.final_state[i].ssm, tol, "final ssm"));
    EXPECT_TRUE(close(got.final_state[i].conv, ref.final_state[i].conv, tol, "final conv"));
  }
  // Gradients w.r.t. every parameter and the initial states.
  std::vector<torch::Tensor> leaves = model->parameters();
  if (p.init)
    for (auto& s : init) { leaves.push_back(s.ssm); leaves.push_back(s.conv); }
  auto loss = [&](const ForwardOutput& o) {
    auto l = torch::nn::functional::cross_entropy(o.logits.reshape({-1, cfg.vocab_size}).to(torch::kFloat64),
                                                  tokens.reshape({-1}));
    for (auto& s : o.final_state) l = l + 0.01 * s.ssm.square().sum() + 0.01 * s.conv.square().sum();
    return l;
  };
  auto g_ref = torch::autograd::grad({loss(ref)}, leaves, {}, /*retain_graph=*/false, false, /*allow_unused=*/true);
  auto g_got = torch::autograd::grad({loss(got)}, leaves, {}, false, false, true);
  auto names = model->named_parameters().keys();
  for (size_t i = 0; i < leaves.size(); ++i) {
    const std::string n = i < names.size() ? names[i] : "initial state " + std::to_string(i - names.size());
    ASSERT_TRUE(g_ref[i].defined()) << n;
    EXPECT_TRUE(close(g_got[i], g_ref[i], tol, "grad " + n));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Grid, ModelEquivalence,
    ::testing::Values(ModelCase{1, 1, true, torch::kFloat64}, ModelCase{3, 2, true, torch::kFloat64},
                      ModelCase{15, 1, false, torch::kFloat64}, ModelCase{17, 2, true, torch::kFloat64},
                      ModelCase{40, 1, true, torch::kFloat32}, ModelCase{33, 2, false, torch::kFloat32}),
    [](const auto& info) {
      return "L" + std::to_string(info.param.L) + "_G" + std::to_string(info.param.G) +
             (info.param.init ? "_init" : "_zero") + (info.param.dtype == torch::kFloat64 ? "_f64" : "_f32");
    });

// Splitting at any point and carrying the final state gives one pass's logits and final state.
TEST(Model, StatePassingAcrossAnySplit) {
  for (int64_t G : {1, 2}) {
    auto cfg = tiny(G);
    auto model = random_model(cfg, torch::kFloat64, 5);
    torch::NoGradGuard ng;
    const int64_t L = 37;
    auto tokens = torch::randint(0, cfg.vocab_size, {3, L}, torch::kInt64);
    auto init = random_state(cfg, 3, torch::kFloat64, false);
    for (bool with_init : {false, true}) {
      const ModelState* ip = with_init ? &init : nullptr;
      auto whole = model->forward(tokens, ip);
      for (int64_t k : {0, 1, 2, 3, 15, 16, 17, 36, 37}) {
        SCOPED_TRACE("G=" + std::to_string(G) + " k=" + std::to_string(k) + (with_init ? " init" : ""));
        auto a = model->forward(tokens.narrow(1, 0, k), ip);
        auto b = model->forward(tokens.narrow(1, k, L - k), &a.final_state);
        EXPECT_TRUE(close(torch::cat({a.logits, b.logits}, 1), whole.logits, 1e-10, "logits"));
        for (int64_t i = 0; i < cfg.n_layer; ++i) {
          EXPECT_TRUE(close(b.final_state[i].ssm, whole.final_state[i].ssm, 1e-10, "ssm"));
          EXPECT_TRUE(close(b.final_state[i].conv, whole.final_state[i].conv, 1e-10, "conv"));
        }
      }
      // Token by token (generation) agrees too, through both scans.
      ModelState s = ip ? *ip : model->zero_state(3);
      std::vector<torch::Tensor> step_logits;
      for (int64_t t = 0; t < L; ++t) {
        auto o = model->forward(tokens.narrow(1, t, 1), &s, {ScanImpl::Sequential});
        step_logits.push_back(o.logits);
        s = o.final_state;
      }
      EXPECT_TRUE(close(torch::cat(step_logits, 1), whole.logits, 1e-10, "token by token"));
    }
  }
}

TEST(Model, ConvStateHoldsLastInputsEvenForShortSequences) {
  auto cfg = tiny(1);
  auto model = random_model(cfg, torch::kFloat64, 8);
  torch::NoGradGuard ng;
  auto init = random_state(cfg, 1, torch::kFloat64, false);
  auto tokens = torch::randint(0, cfg.vocab_size, {1, 1}, torch::kInt64);
  auto o = model->forward(tokens, &init);
  // With one token and d_conv-1 = 3 slots, the two newest initial inputs survive, shifted left.
  EXPECT_TRUE(torch::equal(o.final_state[0].conv.narrow(2, 0, 2), init[0].conv.narrow(2, 1, 2)));
}

TEST(Model, DtLimitClampsWithZeroGradient) {
  auto cfg = tiny(1);
  cfg.dt_limit_hi = 0.02;
  auto model = random_model(cfg, torch::kFloat64, 9);
  {
    torch::NoGradGuard ng;
    for (int64_t i = 0; i < cfg.n_layer; ++i) model->named_parameters()["backbone.layers." + std::to_string(i) +
                                                                       ".mixer.dt_bias"].fill_(5.0);
  }
  auto tokens = torch::randint(0, cfg.vocab_size, {2, 20}, torch::kInt64);
  auto ref = model->forward(tokens, nullptr, {ScanImpl::Sequential});
  auto got = model->forward(tokens, nullptr, {ScanImpl::Chunked});
  EXPECT_TRUE(close(got.logits, ref.logits, 1e-10, "clamped logits"));
  // softplus(5 + small) > 0.02 everywhere: dt is the constant 0.02, so dt_bias gets no gradient.
  auto& dtb = model->named_parameters()["backbone.layers.0.mixer.dt_bias"];
  auto g = torch::autograd::grad({got.logits.square().sum()}, {dtb});
  EXPECT_EQ(g[0].abs().max().item<double>(), 0.0);
  // And the clamp changes the result compared with no limit.
  cfg.dt_limit_hi = INFINITY;
  RecurrentLM unclamped = Mamba2LM(cfg);
  {
    torch::NoGradGuard ng;
    unclamped->to(torch::kFloat64);
    auto src = model->named_parameters();
    for (auto& p : unclamped->named_parameters()) p.value().copy_(src[p.key()]);
  }
  EXPECT_FALSE(close(unclamped->forward(tokens).logits, got.logits, 1e-3, "unclamped"));
}

TEST(Model, BadTokensAndStatesAreRefused) {
  auto cfg = tiny(1);
  RecurrentLM model = Mamba2LM(cfg);
  auto bad = torch::full({1, 4}, cfg.vocab_size, torch::kInt64);
  try {
    model->forward(bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("token id 50 is outside [0, 50)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(model->forward(torch::full({1, 4}, -1, torch::kInt64)), Error);
  auto s = model->zero_state(2);
  s[1].ssm = torch::zeros({2, cfg.nheads(), cfg.headdim, cfg.d_state + 1});
  try {
    model->forward(torch::zeros({2, 3}, torch::kInt64), &s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 1 SSM state"), std::string::npos) << e.what();
  }
  auto s2 = model->zero_state(1);  // batch mismatch
  EXPECT_THROW(model->forward(torch::zeros({2, 3}, torch::kInt64), &s2), Error);
  // Non-finite initial states are named by layer and kind; finite ones pass.
  auto s3 = model->zero_state(2);
  EXPECT_NO_THROW(model->forward(torch::zeros({2, 3}, torch::kInt64), &s3));
  s3[1].conv = s3[1].conv.clone();
  s3[1].conv.view({-1})[3] = std::numeric_limits<float>::infinity();
  try {
    model->forward(torch::zeros({2, 3}, torch::kInt64), &s3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 1 conv state holds 1 non-finite values"), std::string::npos) << e.what();
  }
  auto s4 = model->zero_state(2);
  s4[0].ssm = torch::full_like(s4[0].ssm, std::numeric_limits<float>::quiet_NaN());
  try {
    model->forward(torch::zeros({2, 3}, torch::kInt64), &s4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 0 SSM state holds"), std::string::npos) << e.what();
  }
}

}  // namespace
