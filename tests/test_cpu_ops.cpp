// test_cpu_ops.cpp — the CPU fast path's conv1d + SiLU and gated RMSNorm (core/model/cpu_ops.h)
// against the ATen formulation computed in float64 from the same float32 values: outputs, the final
// conv state and the gradients of every input (the initial conv state included, and through the
// final state), on odd sizes, lengths shorter than the kernel, strided inputs (a narrow of the
// in-projection, as the model passes them), with and without bias and initial state.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/mamba2/cpu_ops.h"
#include "tests/test_util.h"

using namespace statescope;
using statescope::test::close;
namespace F = torch::nn::functional;

namespace {

// The model's ATen conv (mamba2/model.cpp): x [b, L, C], w [C, 1, K], conv0 [b, C, K-1] or undefined.
std::pair<torch::Tensor, torch::Tensor> conv_ref(const torch::Tensor& x, const torch::Tensor& w,
                                                 const torch::Tensor& bias, const torch::Tensor& conv0) {
  const int64_t b = x.size(0), L = x.size(1), C = x.size(2), K = w.size(2);
  auto c0 = conv0.defined() ? conv0 : torch::zeros({b, C, K - 1}, x.options());
  auto in = torch::cat({c0, x.transpose(1, 2)}, 2);  // [b, C, K-1+L]
  auto out = F::conv1d(in, w, F::Conv1dFuncOptions().bias(bias).groups(C));
  return {F::silu(out).transpose(1, 2), in.narrow(2, L, K - 1)};
}

struct ConvCase {
  int64_t L, C, K;
  bool bias, init, strided;
};

std::string name(const ConvCase& c) {
  return "L" + std::to_string(c.L) + "_C" + std::to_string(c.C) + "_K" + std::to_string(c.K) + (c.bias ? "_bias" : "") +
         (c.init ? "_conv0" : "") + (c.strided ? "_strided" : "");
}

class CpuConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(CpuConv, MatchesAtenWithGradients) {
  const ConvCase c = GetParam();
  torch::manual_seed(11 + c.L + c.C * 7 + c.K);
  const int64_t b = 3;
  // Strided: the channels are a narrow of wider rows (as xBC is of the in-projection's output).
  auto wide = torch::randn({b, c.L, c.C + (c.strided ? 9 : 0)});
  auto x_leaf = wide.clone().requires_grad_(true);
  auto x = c.strided ? x_leaf.narrow(2, 4, c.C) : x_leaf;
  auto w = (torch::randn({c.C, 1, c.K}) * 0.5).requires_grad_(true);
  auto bias = c.bias ? torch::randn({c.C}).requires_grad_(true) : torch::Tensor();
  auto conv0 = c.init ? torch::randn({b, c.C, c.K - 1}).requires_grad_(true) : torch::Tensor();
  std::vector<torch::Tensor> leaves{x_leaf, w};
  if (c.bias) leaves.push_back(bias);
  if (c.init) leaves.push_back(conv0);
  std::vector<torch::Tensor> rl;
  for (auto& t : leaves) rl.push_back(t.detach().to(torch::kFloat64).requires_grad_(true));
  auto rx = c.strided ? rl[0].narrow(2, 4, c.C) : rl[0];
  auto rbias = c.bias ? rl[2] : torch::Tensor();
  auto rconv0 = c.init ? rl.back() : torch::Tensor();

  auto [out, fin] = cpu_conv1d_silu(x, w, bias, conv0);
  auto [rout, rfin] = conv_ref(rx, rl[1], rbias, rconv0);
  ASSERT_EQ(out.sizes(), rout.sizes());
  ASSERT_EQ(fin.sizes(), rfin.sizes());
  EXPECT_TRUE(close(out, rout, 1e-5, "conv out")) << name(c);
  EXPECT_TRUE(close(fin, rfin, 0.0, "final conv state")) << name(c);

  torch::manual_seed(2);
  auto go = torch::randn_like(out), gf = torch::randn_like(fin);
  auto g = torch::autograd::grad({(out * go).sum() + (fin * gf).sum()}, leaves, {}, false, false, true);
  auto rg = torch::autograd::grad({(rout * go.to(torch::kFloat64)).sum() + (rfin * gf.to(torch::kFloat64)).sum()}, rl);
  const char* names[] = {"dx", "dw", "dbias/dconv0", "dconv0"};
  for (size_t i = 0; i < leaves.size(); ++i) {
    ASSERT_TRUE(g[i].defined()) << names[i] << " " << name(c);
    EXPECT_TRUE(close(g[i], rg[i], 1e-4, names[i])) << name(c);
  }
}

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> v;
  for (int64_t L : {1, 2, 3, 5, 70})
    for (int64_t C : {5, 8, 19})
      for (bool init : {false, true}) v.push_back({L, C, 4, L % 2 == 1, init, C == 19});
  v.push_back({9, 13, 2, true, true, true});     // K = 2
  v.push_back({40, 192, 4, true, true, true});   // the tiny model's conv, as the model calls it
  v.push_back({1, 192, 4, true, true, false});   // one decoding step
  return v;
}

INSTANTIATE_TEST_SUITE_P(Grid, CpuConv, ::testing::ValuesIn(conv_cases()),
                         [](const auto& info) { return name(info.param); });

// The model's ATen gate + norm: g = y silu(z), per-group RMSNorm.
torch::Tensor norm_ref(const torch::Tensor& y, const torch::Tensor& z, const torch::Tensor& w, int64_t ng,
                       double eps) {
  const int64_t b = y.size(0), L = y.size(1), D = y.size(2);
  auto g = (y * F::silu(z)).reshape({b, L, ng, D / ng});
  auto n = g * torch::rsqrt(g.square().mean(-1, true) + eps) * w.view({ng, D / ng});
  return n.reshape({b, L, D});
}

struct NormCase {
  int64_t L, D, ng;
};

class CpuGatedNorm : public ::testing::TestWithParam<NormCase> {};

TEST_P(CpuGatedNorm, MatchesAtenWithGradients) {
  const NormCase c = GetParam();
  torch::manual_seed(5 + c.D + c.L);
  const int64_t b = 2;
  auto y = torch::randn({b, c.L, c.D}).requires_grad_(true);
  auto zw = torch::randn({b, c.L, c.D + 7}).requires_grad_(true);  // z is a narrow of wider rows
  auto z = zw.narrow(2, 3, c.D);
  auto w = (torch::rand({c.D}) + 0.5).requires_grad_(true);
  std::vector<torch::Tensor> leaves{y, zw, w}, rl;
  for (auto& t : leaves) rl.push_back(t.detach().to(torch::kFloat64).requires_grad_(true));
  auto out = cpu_gated_rms_norm(y, z, w, c.ng, 1e-5);
  auto ref = norm_ref(rl[0], rl[1].narrow(2, 3, c.D), rl[2], c.ng, 1e-5);
  EXPECT_TRUE(close(out, ref, 1e-5, "norm out"));
  auto go = torch::randn_like(out);
  auto g = torch::autograd::grad({(out * go).sum()}, leaves);
  auto rg = torch::autograd::grad({(ref * go.to(torch::kFloat64)).sum()}, rl);
  EXPECT_TRUE(close(g[0], rg[0], 1e-4, "dy"));
  EXPECT_TRUE(close(g[1], rg[1], 1e-4, "dz"));
  EXPECT_TRUE(close(g[2], rg[2], 1e-4, "dw"));
}

INSTANTIATE_TEST_SUITE_P(Grid, CpuGatedNorm,
                         ::testing::Values(NormCase{1, 8, 1}, NormCase{5, 12, 2}, NormCase{37, 130, 1},
                                           NormCase{300, 128, 1}, NormCase{3, 24, 3}),
                         [](const auto& info) {
                           return "L" + std::to_string(info.param.L) + "_D" + std::to_string(info.param.D) + "_g" +
                                  std::to_string(info.param.ng);
                         });

}  // namespace

TEST(CpuOps, RefuseWrongShapesAndTypesByName) {
  auto x = torch::randn({2, 5, 8}), w = torch::randn({8, 1, 4});
  EXPECT_THROW(cpu_conv1d_silu(x, torch::randn({7, 1, 4}), {}, {}), Error);
  EXPECT_THROW(cpu_conv1d_silu(x, w, {}, torch::randn({2, 8, 4})), Error);
  EXPECT_THROW(cpu_conv1d_silu(x.to(torch::kFloat64), w, {}, {}), Error);
  EXPECT_THROW(cpu_gated_rms_norm(x, x, torch::randn({7}), 1, 1e-5), Error);
  EXPECT_THROW(cpu_gated_rms_norm(x, x, torch::randn({8}), 3, 1e-5), Error);
  // The sigmoid holds at the extremes (no NaN from exp overflow): silu(+-100) = 100 / ~0.
  auto big = torch::tensor({-100.0f, -30.0f, 0.0f, 30.0f, 100.0f}).view({1, 5, 1});
  auto [out, fin] = cpu_conv1d_silu(big, torch::ones({1, 1, 1}), {}, {});
  EXPECT_TRUE(close(out, F::silu(big), 1e-6, "silu at the extremes"));
}
