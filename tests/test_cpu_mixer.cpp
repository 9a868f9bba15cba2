// test_cpu_mixer.cpp — the CPU fast path's fused mixer node (core/model/cpu_mixer.h) through the whole
// model: a float32 model on ScanImpl::Fused (the one node of loops) against the same weights in
// float64 on the sequential reference scan (ATen ops everywhere else). Compared: logits, state norms,
// final SSM and conv states, and the gradient of every parameter and of both initial states, under a
// loss that reads the logits and both final states (so the gradients through the final states are
// checked too). Odd sizes: d_state and headdim not multiples of 8, two B/C groups with the norm per
// group, kernel 2, sequences shorter than the conv kernel, one token, more tokens than one saved
// chunk, with and without dt clamp, conv bias and initial states.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/mamba2/cpu_mixer.h"
#include "core/model/mamba2/model.h"
#include "tests/test_util.h"

using namespace statescope;
using statescope::test::close;

namespace {

struct MixerCase {
  const char* name;
  int64_t d_model, headdim, d_state, ngroups, d_conv, b, L;
  bool conv_bias, clamp, init, per_group;
};

const MixerCase kMixerCases[] = {
    {"odd_sizes_clamp_init", 24, 8, 11, 1, 4, 3, 37, true, true, true, true},
    {"two_groups_k2_no_bias", 24, 4, 6, 2, 2, 2, 19, false, false, true, true},
    {"two_groups_norm_over_all", 24, 4, 6, 2, 4, 2, 9, true, true, true, false},
    {"shorter_than_kernel", 16, 8, 8, 1, 4, 2, 2, true, true, true, true},
    {"one_token", 16, 8, 8, 1, 4, 3, 1, true, false, true, true},
    {"past_a_saved_chunk_no_init", 16, 8, 5, 1, 4, 2, 150, true, true, false, true},
    {"embedded_shape", 64, 16, 32, 1, 4, 2, 70, true, true, true, true},
};

Mamba2Config config_of(const MixerCase& c) {
  Mamba2Config cfg;
  cfg.d_model = c.d_model, cfg.n_layer = 2, cfg.d_state = c.d_state, cfg.headdim = c.headdim;
  cfg.ngroups = c.ngroups, cfg.d_conv = c.d_conv, cfg.vocab_size = 40, cfg.chunk_size = 16;
  cfg.conv_bias = c.conv_bias, cfg.norm_per_group = c.per_group;
  if (c.clamp) cfg.dt_limit_lo = 0.002, cfg.dt_limit_hi = 0.05;  // clamps some dt at both ends
  return cfg;
}

// Everything the comparison reads from one forward + backward.
struct Outcome {
  std::vector<torch::Tensor> values;  // logits, norms, delta norms, final states
  std::vector<std::pair<std::string, torch::Tensor>> grads;
};

Outcome run(RecurrentLM& m, const torch::Tensor& tokens, const ModelState& init0, bool use_init, ScanImpl scan, uint64_t seed) {
  ModelState init;
  std::vector<torch::Tensor> leaves;
  for (auto& l : init0) {
    const auto dt = m->output_weight().scalar_type();
    init.push_back({l.ssm.to(dt).clone().requires_grad_(true), l.conv.to(dt).clone().requires_grad_(true)});
    leaves.push_back(init.back().ssm);
    leaves.push_back(init.back().conv);
  }
  ForwardOptions fo;
  fo.scan = scan;
  fo.state_norms = true;
  m->zero_grad();
  auto out = m->forward(tokens, use_init ? &init : nullptr, fo);
  torch::manual_seed(seed);  // the same loss weights for both runs
  auto dt = torch::kFloat64;
  auto loss = (out.logits.to(dt) * torch::randn(out.logits.sizes(), dt)).sum();
  for (auto& f : out.final_state) {
    loss = loss + (f.ssm.to(dt) * torch::randn(f.ssm.sizes(), dt)).sum();
    loss = loss + (f.conv.to(dt) * torch::randn(f.conv.sizes(), dt)).sum();
  }
  loss.backward();
  Outcome r;
  r.values = {out.logits.detach(), out.norm_per_head.detach(), out.delta_norm.detach()};
  for (auto& f : out.final_state) r.values.push_back(f.ssm.detach()), r.values.push_back(f.conv.detach());
  for (auto& p : m->named_parameters()) r.grads.emplace_back(p.key(), p.value().grad().clone());
  if (use_init)
    for (size_t i = 0; i < leaves.size(); ++i)
      r.grads.emplace_back((i % 2 ? "conv0 layer " : "h0 layer ") + std::to_string(i / 2), leaves[i].grad().clone());
  return r;
}

class CpuMixer : public ::testing::TestWithParam<MixerCase> {};

TEST_P(CpuMixer, ModelMatchesTheFloat64ReferenceWithEveryGradient) {
  const MixerCase c = GetParam();
  const Mamba2Config cfg = config_of(c);
  RecurrentLM m32 = Mamba2LM(cfg), m64 = Mamba2LM(cfg);
  m32->reset_parameters(7);
  {  // weights off their initial values (norm weights, D, biases all 1 or 0 would hide mistakes)
    torch::NoGradGuard ng;
    torch::manual_seed(5);
    for (auto& p : m32->parameters()) p.add_(torch::randn_like(p) * 0.1);
    m64->to(torch::kFloat64);
    auto src = m32->named_parameters();
    for (auto& p : m64->named_parameters()) p.value().copy_(src[p.key()]);
  }
  torch::manual_seed(9);
  auto tokens = torch::randint(0, cfg.vocab_size, {c.b, c.L}, torch::kInt64);
  ModelState init;
  for (int64_t l = 0; l < cfg.n_layer; ++l)
    init.push_back({torch::randn({c.b, cfg.nheads(), cfg.headdim, cfg.d_state}) * 0.5,
                    torch::randn({c.b, cfg.conv_dim(), cfg.d_conv - 1})});

  const Outcome got = run(m32, tokens, init, c.init, ScanImpl::Fused, 3);
  const Outcome ref = run(m64, tokens, init, c.init, ScanImpl::Sequential, 3);
  const char* names[] = {"logits", "state norms", "delta norms"};
  for (size_t i = 0; i < got.values.size(); ++i) {
    const std::string what = i < 3 ? names[i] : (i % 2 ? "final ssm state " : "final conv state ") + std::to_string((i - 3) / 2);
    EXPECT_TRUE(close(got.values[i], ref.values[i], 1e-4, what)) << c.name;
  }
  ASSERT_EQ(got.grads.size(), ref.grads.size());
  for (size_t i = 0; i < got.grads.size(); ++i) {
    ASSERT_TRUE(got.grads[i].second.defined()) << got.grads[i].first << " " << c.name;
    EXPECT_TRUE(close(got.grads[i].second, ref.grads[i].second, 2e-4, "d " + got.grads[i].first)) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuMixer, ::testing::ValuesIn(kMixerCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Without autograd the node keeps nothing for a backward and returns the same numbers.
TEST(CpuMixerUse, EvaluatesWithoutGradientAndRefusesWrongInputs) {
  const Mamba2Config cfg = config_of(kMixerCases[0]);
  RecurrentLM m = Mamba2LM(cfg);
  m->reset_parameters(1);
  auto tokens = torch::randint(0, cfg.vocab_size, {2, 21}, torch::kInt64);
  ForwardOptions fused;
  fused.scan = ScanImpl::Fused;
  auto with_grad = m->forward(tokens, nullptr, fused).logits;
  torch::Tensor without;
  {
    torch::NoGradGuard ng;
    without = m->forward(tokens, nullptr, fused).logits;
  }
  EXPECT_TRUE(with_grad.requires_grad());
  EXPECT_FALSE(without.requires_grad());
  EXPECT_TRUE(torch::equal(with_grad.detach(), without));

  CpuMixerDims d;
  d.H = 6, d.P = 8, d.N = 11;
  const int64_t Di = 48, Cd = Di + 22, R = Di + Cd + 6;
  auto zx = torch::randn({2, 5, R}), w = torch::randn({Cd, 1, 4}), h = torch::randn({6}), nw = torch::randn({Di});
  EXPECT_NO_THROW(cpu_mixer_core(zx, w, {}, h, h, h, nw, {}, {}, d, false));
  EXPECT_THROW(cpu_mixer_core(zx.narrow(2, 0, R - 1), w, {}, h, h, h, nw, {}, {}, d, false), Error);
  EXPECT_THROW(cpu_mixer_core(zx.to(torch::kFloat64), w, {}, h, h, h, nw, {}, {}, d, false), Error);
  EXPECT_THROW(cpu_mixer_core(zx, w, {}, h, h, h, nw, {}, torch::randn({2, 6, 8, 12}), d, false), Error);
  EXPECT_THROW(cpu_mixer_core(zx, w, {}, h, h, h, nw, torch::randn({2, Cd, 2}), {}, d, false), Error);
}

}  // namespace
