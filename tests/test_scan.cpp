// test_scan.cpp — chunked SSD against the sequential reference: outputs, final states, norms and
// gradients, over odd lengths, chunk sizes, group counts, zero and random initial states.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "core/model/mamba2/ssd_scan.h"
#include "tests/test_util.h"

using namespace statescope;
using statescope::test::close;

namespace {

struct Case {
  int64_t L, Q, G;
  bool init;
  torch::Dtype dtype;
};

std::string name(const Case& c) {
  return "L" + std::to_string(c.L) + "_Q" + std::to_string(c.Q) + "_G" + std::to_string(c.G) +
         (c.init ? "_h0" : "_zero") + (c.dtype == torch::kFloat64 ? "_f64" : "_f32");
}

struct Inputs { torch::Tensor x, dt, A, B, C, h0; };

Inputs make(const Case& c, uint64_t seed) {
  torch::manual_seed(seed);
  const int64_t b = 2, H = 4, P = 3, N = 5;
  auto o = torch::TensorOptions().dtype(c.dtype);
  Inputs in;
  in.x = torch::randn({b, c.L, H, P}, o);
  in.dt = torch::nn::functional::softplus(torch::randn({b, c.L, H}, o) - 1.0);  // ~[0.05, 2]
  in.A = -torch::rand({H}, o) * 3.0 - 0.05;
  in.B = torch::randn({b, c.L, c.G, N}, o);
  in.C = torch::randn({b, c.L, c.G, N}, o);
  if (c.init) in.h0 = torch::randn({b, H, P, N}, o) * 2.0;
  return in;
}

class ScanEquivalence : public ::testing::TestWithParam<Case> {};

TEST_P(ScanEquivalence, ChunkedMatchesSequential) {
  const Case c = GetParam();
  const double tol = c.dtype == torch::kFloat64 ? 1e-5 : 1e-4;
  auto in = make(c, 1234 + c.L * 7 + c.Q);
  std::vector<torch::Tensor> leaves{in.x, in.dt, in.A, in.B, in.C};
  if (c.init) leaves.push_back(in.h0);
  for (auto& t : leaves) t.requires_grad_(true);

  auto ref = ssd_scan_sequential(in.x, in.dt, in.A, in.B, in.C, in.h0, /*want_norms=*/true);
  auto got = ssd_scan_chunked(in.x, in.dt, in.A, in.B, in.C, in.h0, c.Q, /*want_norms=*/true);
  EXPECT_TRUE(close(got.y, ref.y, tol, "y"));
  EXPECT_TRUE(close(got.final_state, ref.final_state, tol, "final state"));
  EXPECT_TRUE(close(got.state_norm, ref.state_norm, tol, "state norm"));
  EXPECT_TRUE(close(got.delta_norm, ref.delta_norm, tol, "state change norm"));

  // Gradients of a random linear functional of (y, final state) w.r.t. every input.
  torch::manual_seed(99);
  auto ry = torch::randn_like(ref.y), rs = torch::randn_like(ref.final_state);
  auto g_ref = torch::autograd::grad({(ref.y * ry).sum() + (ref.final_state * rs).sum()}, leaves);
  auto g_got = torch::autograd::grad({(got.y * ry).sum() + (got.final_state * rs).sum()}, leaves);
  const char* names[] = {"dx", "ddt", "dA", "dB", "dC", "dh0"};
  for (size_t i = 0; i < leaves.size(); ++i) {
    // dA sums over every position; scale its tolerance by the number of terms.
    const double t = tol;
    EXPECT_TRUE(close(g_got[i], g_ref[i], t, names[i])) << name(c);
  }
}

std::vector<Case> cases() {
  std::vector<Case> v;
  std::set<std::string> seen;  // L = 3 and L = Q - 1 coincide for Q = 4
  auto add = [&](Case c) {
    if (seen.insert(name(c)).second) v.push_back(c);
  };
  for (auto dtype : {torch::kFloat64, torch::kFloat32})
    for (int64_t Q : {4, 16})
      for (int64_t L : {int64_t{1}, int64_t{3}, Q - 1, Q, Q + 1, 3 * Q + 2})
        for (int64_t G : {1, 2})
          for (bool init : {false, true}) add({L, Q, G, init, dtype});
  // Long sequences: many chunks, a chunk size that divides nothing.
  add({1000, 64, 1, true, torch::kFloat64});
  add({1000, 37, 2, true, torch::kFloat32});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Grid, ScanEquivalence, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return name(info.param); });

TEST(Scan, EmptySequenceKeepsInitialState) {
  auto in = make({0, 8, 1, true, torch::kFloat64}, 5);
  auto r = ssd_scan_chunked(in.x, in.dt, in.A, in.B, in.C, in.h0, 8, true);
  EXPECT_EQ(r.y.size(1), 0);
  EXPECT_TRUE(torch::equal(r.final_state, in.h0));
}

TEST(Scan, LongDecayStaysFinite) {
  // Strong decay over a long chunk: exp of large negative segment sums must not produce NaN or
  // cancellation (the masked cumsum, not exp(cs_i - cs_j)).
  Case c{300, 256, 1, true, torch::kFloat32};
  auto in = make(c, 7);
  in.dt = in.dt * 20;  // cumulative decay ~ -1e4 over a chunk
  in.dt.requires_grad_(true);
  auto ref = ssd_scan_sequential(in.x, in.dt, in.A, in.B, in.C, in.h0, false);
  auto got = ssd_scan_chunked(in.x, in.dt, in.A, in.B, in.C, in.h0, c.Q, false);
  EXPECT_TRUE(close(got.y, ref.y, 1e-4, "y"));
  auto g = torch::autograd::grad({got.y.sum()}, {in.dt});
  EXPECT_TRUE(torch::isfinite(g[0]).all().item<bool>());
}

TEST(Scan, ShapeErrorsNameTheArgument) {
  auto in = make({5, 4, 1, true, torch::kFloat32}, 1);
  try {
    ssd_scan_chunked(in.x, in.dt.narrow(1, 0, 4), in.A, in.B, in.C, in.h0, 4, false);
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("dt must be"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ssd_scan_chunked(in.x, in.dt, in.A, in.B, in.C, in.h0.narrow(3, 0, 2), 4, false), std::exception);
}

}  // namespace
