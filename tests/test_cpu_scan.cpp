// test_cpu_scan.cpp — the fast CPU scan (core/model/cpu_scan.h) against the sequential reference
// computed in float64: outputs, final states, norms and the gradients of every input (h0 included),
// over lengths around and across the saved-chunk boundary (64), group counts, zero and random
// initial states (with the skip term D x), real-model head sizes; and that evaluation (no gradient) keeps no chunk states.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/mamba2/cpu_scan.h"
#include "core/model/mamba2/ssd_scan.h"
#include "tests/test_util.h"

using namespace statescope;
using statescope::test::close;

namespace {

struct Case {
  int64_t L, G, P, N;
  bool init;
};

std::string name(const Case& c) {
  return "L" + std::to_string(c.L) + "_G" + std::to_string(c.G) + "_P" + std::to_string(c.P) + "_N" +
         std::to_string(c.N) + (c.init ? "_h0" : "_zero");
}

class CpuScan : public ::testing::TestWithParam<Case> {};

TEST_P(CpuScan, MatchesTheSequentialReferenceWithGradients) {
  const Case c = GetParam();
  torch::manual_seed(77 + c.L * 3 + c.N);
  const int64_t b = 2, H = 4;
  auto o = torch::TensorOptions().dtype(torch::kFloat32);
  auto x = torch::randn({b, c.L, H, c.P}, o), B = torch::randn({b, c.L, c.G, c.N}, o);
  auto C = torch::randn({b, c.L, c.G, c.N}, o);
  auto dt = torch::nn::functional::softplus(torch::randn({b, c.L, H}, o) - 1.0);
  auto A = -torch::rand({H}, o) * 3.0 - 0.05;
  auto h0 = c.init ? torch::randn({b, H, c.P, c.N}, o) * 2.0 : torch::Tensor();
  auto D = c.init ? torch::randn({H}, o) : torch::Tensor();  // the skip term, with the initial-state cases
  std::vector<torch::Tensor> leaves{x, dt, A, B, C};
  if (c.init) leaves.push_back(h0), leaves.push_back(D);
  for (auto& t : leaves) t.requires_grad_(true);
  // The reference in float64 from the same float32 values.
  std::vector<torch::Tensor> ref_leaves;
  for (auto& t : leaves) ref_leaves.push_back(t.detach().to(torch::kFloat64).requires_grad_(true));
  auto rh0 = c.init ? ref_leaves[5] : torch::Tensor();
  auto ref = ssd_scan_sequential(ref_leaves[0], ref_leaves[1], ref_leaves[2], ref_leaves[3], ref_leaves[4], rh0, true);
  if (c.init) ref.y = ref.y + ref_leaves[0] * ref_leaves[6].view({1, 1, H, 1});
  auto got = cpu_scan(x, dt, A, B, C, h0, true, D);
  const double tol = 2e-4;
  EXPECT_TRUE(close(got.y, ref.y, tol, "y")) << name(c);
  EXPECT_TRUE(close(got.final_state, ref.final_state, tol, "final state")) << name(c);
  EXPECT_TRUE(close(got.state_norm, ref.state_norm, tol, "state norm")) << name(c);
  EXPECT_TRUE(close(got.delta_norm, ref.delta_norm, tol, "state change norm")) << name(c);
  auto plain = cpu_scan(x, dt, A, B, C, h0, false, D);  // without the measurements: the other step loop
  EXPECT_TRUE(close(plain.y, ref.y, tol, "y without norms")) << name(c);
  EXPECT_TRUE(close(plain.final_state, ref.final_state, tol, "final state without norms")) << name(c);

  torch::manual_seed(5);
  auto ry = torch::randn_like(got.y), rs = torch::randn_like(got.final_state);
  auto g_got = torch::autograd::grad({(got.y * ry).sum() + (got.final_state * rs).sum()}, leaves);
  auto g_ref = torch::autograd::grad(
      {(ref.y * ry.to(torch::kFloat64)).sum() + (ref.final_state * rs.to(torch::kFloat64)).sum()}, ref_leaves);
  const char* names[] = {"dx", "ddt", "dA", "dB", "dC", "dh0", "dD"};
  for (size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_EQ(g_got[i].scalar_type(), torch::kFloat32) << names[i];
    EXPECT_TRUE(close(g_got[i], g_ref[i], i == 2 || i == 6 ? 1e-3 : tol, names[i])) << name(c);  // dA sums b x L terms
  }
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (int64_t L : {int64_t{1}, int64_t{5}, kCpuScanChunk - 1, kCpuScanChunk, kCpuScanChunk + 1, 3 * kCpuScanChunk + 7})
    for (int64_t G : {1, 2})
      for (bool init : {false, true}) v.push_back({L, G, 3, 5, init});
  v.push_back({300, 1, 16, 32, true});   // the tiny benchmark's head size
  v.push_back({130, 2, 64, 128, true});  // the 130m model's head size, 2 groups
  v.push_back({71, 1, 19, 21, true});    // blocks of eight rows and eight columns with tails of both
  return v;
}

INSTANTIATE_TEST_SUITE_P(Grid, CpuScan, ::testing::ValuesIn(cases()), [](const auto& info) { return name(info.param); });

}  // namespace

TEST(CpuScanUse, AgreesWithTheChunkedScanAndEvaluatesWithoutGradient) {
  torch::manual_seed(3);
  const int64_t b = 3, L = 200, H = 8, P = 16, N = 32;
  auto x = torch::randn({b, L, H, P}), B = torch::randn({b, L, 1, N}), C = torch::randn({b, L, 1, N});
  auto dt = torch::nn::functional::softplus(torch::randn({b, L, H}) - 2.0);
  auto A = -torch::rand({H}) - 0.1;
  auto h0 = torch::randn({b, H, P, N});
  auto chunked = ssd_scan_chunked(x, dt, A, B, C, h0, 64, false);
  torch::NoGradGuard no_grad;
  auto got = cpu_scan(x, dt, A, B, C, h0, false);
  EXPECT_TRUE(close(got.y, chunked.y, 1e-4, "y"));
  EXPECT_TRUE(close(got.final_state, chunked.final_state, 1e-4, "final state"));
  EXPECT_FALSE(got.state_norm.defined());
  EXPECT_FALSE(got.y.requires_grad());
  // Wrong shapes are refused by name, as by the other scans.
  EXPECT_THROW(cpu_scan(x, dt, A, B, C, torch::randn({b, H, P, N + 1}), false), Error);
  EXPECT_THROW(cpu_scan(x, dt, A, B, C, h0, false, torch::randn({H + 1})), Error);
}
