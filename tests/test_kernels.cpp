// test_kernels.cpp — CPU twins against the LibTorch scans (always), CUDA kernels against their CPU
// twins (on a GPU; skipped with a visible reason elsewhere, never counted as passing).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/ssd_scan.h"
#include "core/ssm_scan_ref.h"
#include "tests/test_util.h"

using namespace statescope;
using statescope::test::close;

namespace {

struct ScanCase { int64_t b, L, H, P, G, N; bool init; };

struct ScanTensors {
  torch::Tensor x, dt, A, B, C, h0, y, hf, norm;
  kernels::SsmScanArgs args(const ScanCase& c) {
    kernels::SsmScanArgs a;
    a.x = x.data_ptr<float>(); a.dt = dt.data_ptr<float>(); a.A = A.data_ptr<float>();
    a.B = B.data_ptr<float>(); a.C = C.data_ptr<float>(); a.h0 = c.init ? h0.data_ptr<float>() : nullptr;
    a.y = y.data_ptr<float>(); a.h_final = hf.data_ptr<float>(); a.norm = norm.data_ptr<float>();
    a.b = c.b; a.L = c.L; a.H = c.H; a.P = c.P; a.G = c.G; a.N = c.N;
    return a;
  }
  ScanTensors to(torch::Device d) const {
    return {x.to(d), dt.to(d), A.to(d), B.to(d), C.to(d), h0.to(d), y.to(d), hf.to(d), norm.to(d)};
  }
};

ScanTensors make(const ScanCase& c, uint64_t seed) {
  torch::manual_seed(seed);
  ScanTensors t;
  t.x = torch::randn({c.b, c.L, c.H, c.P});
  t.dt = torch::nn::functional::softplus(torch::randn({c.b, c.L, c.H}) - 1);
  t.A = -torch::rand({c.H}) * 2 - 0.1;
  t.B = torch::randn({c.b, c.L, c.G, c.N});
  t.C = torch::randn({c.b, c.L, c.G, c.N});
  t.h0 = torch::randn({c.b, c.H, c.P, c.N});
  t.y = torch::zeros({c.b, c.L, c.H, c.P});
  t.hf = torch::zeros({c.b, c.H, c.P, c.N});
  t.norm = torch::zeros({c.b, c.L, c.H});
  return t;
}

const std::vector<ScanCase> kCases{{1, 1, 2, 3, 1, 5, false}, {2, 37, 4, 8, 2, 16, true},
                                   {1, 300, 8, 64, 1, 128, true}, {3, 129, 6, 5, 3, 7, true}};

}  // namespace

TEST(KernelTwins, SsmScanRefMatchesTheLibTorchScan) {
  for (auto& c : kCases) {
    SCOPED_TRACE("L=" + std::to_string(c.L) + " H=" + std::to_string(c.H));
    auto t = make(c, 10 + c.L);
    ssm_scan_fwd_ref(t.args(c));
    auto ref = ssd_scan_sequential(t.x, t.dt, t.A, t.B, t.C, c.init ? t.h0 : torch::Tensor(), true);
    EXPECT_TRUE(close(t.y, ref.y, 1e-4, "y"));
    EXPECT_TRUE(close(t.hf, ref.final_state, 1e-4, "final state"));
    EXPECT_TRUE(close(t.norm, ref.state_norm, 1e-4, "norm"));
  }
}

TEST(KernelsCuda, SsmScanMatchesItsCpuTwin) {
#ifndef STATESCOPE_HAVE_KERNELS
  GTEST_SKIP() << "CUDA kernels not built (no nvcc at configure time)";
#else
  if (!kernels::cuda_device_available() || !torch::cuda::is_available())
    GTEST_SKIP() << "no CUDA device on this machine: the GPU comparison did not run";
  for (auto& c : kCases) {
    SCOPED_TRACE("L=" + std::to_string(c.L) + " H=" + std::to_string(c.H));
    auto cpu = make(c, 20 + c.L);
    auto gpu = cpu.to(torch::kCUDA);
    ssm_scan_fwd_ref(cpu.args(c));
    ASSERT_EQ(kernels::ssm_scan_fwd_cuda(gpu.args(c), nullptr), "");
    torch::cuda::synchronize();
    EXPECT_TRUE(close(gpu.y.cpu(), cpu.y, 1e-4, "y"));
    EXPECT_TRUE(close(gpu.hf.cpu(), cpu.hf, 1e-4, "final state"));
    EXPECT_TRUE(close(gpu.norm.cpu(), cpu.norm, 1e-4, "norm"));
  }
#endif
}
