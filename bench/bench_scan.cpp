// bench_scan.cpp — the Mamba-2 CPU scan's loops alone (cpu_scan_forward with the chunk starts a
// training step keeps, and cpu_scan_backward) at a layer's shape, best of ITERS, in GFLOP/s as
// bench_forward counts them (forward 5 H P N per token, backward 14: the recompute 3, the adjoint 11)
// beside the round's own 1024^3 sgemm at the same threads.
// Usage: bench_scan [THREADS] [ITERS] [L] [H] [P] [N]   (default: 1 7 512 24 64 128, the 130m layer at batch 1)
#include <torch/torch.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/model/mamba2/cpu_scan.h"

using namespace statescope;

int main(int argc, char** argv) {
  auto arg = [&](int i, int64_t d) { return argc > i ? std::stoll(argv[i]) : d; };
  const int threads = static_cast<int>(arg(1, 1)), iters = static_cast<int>(arg(2, 7));
  CpuScanArgs a;
  a.b = 1, a.L = arg(3, 512), a.H = arg(4, 24), a.P = arg(5, 64), a.N = arg(6, 128), a.G = 1;
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  auto x = torch::randn({a.b, a.L, a.H, a.P}), B = torch::randn({a.b, a.L, a.G, a.N}), C = torch::randn_like(B);
  auto dt = torch::rand({a.b * a.L, a.H}) * 0.1, A = -torch::rand({a.H}), D = torch::randn({a.H});
  auto h0 = torch::randn({a.b, a.H, a.P, a.N}), dy = torch::randn_like(x), dhf = torch::randn_like(h0);
  a.x = x.data_ptr<float>(), a.x_row = a.H * a.P, a.B = B.data_ptr<float>(), a.C = C.data_ptr<float>();
  a.bc_row = a.G * a.N, a.dt = dt.data_ptr<float>(), a.A = A.data_ptr<float>(), a.h0 = h0.data_ptr<float>();
  a.D = D.data_ptr<float>();
  auto y = torch::empty_like(x), hf = torch::empty_like(h0), starts = torch::empty({cpu_scan_starts_size(a)});
  auto dx = torch::empty_like(x), ddt = torch::empty_like(dt), dBh = torch::empty({a.b, a.L, a.H, a.N});
  auto dCh = torch::empty_like(dBh), dh0 = torch::empty_like(h0);
  std::vector<double> dA(static_cast<size_t>(a.b * a.H)), dD(dA.size());
  using clk = std::chrono::steady_clock;
  auto best = [&](auto&& f) {
    double b = 1e30;
    for (int i = 0; i <= iters; ++i) {
      const auto t0 = clk::now();
      f();
      const double s = std::chrono::duration<double>(clk::now() - t0).count();
      if (i > 0) b = std::min(b, s);
    }
    return b;
  };
  const double fwd = best([&] {
    cpu_scan_forward(a, y.data_ptr<float>(), hf.data_ptr<float>(), starts.data_ptr<float>(), nullptr, nullptr);
  });
  const double bwd = best([&] {
    cpu_scan_backward(a, starts.data_ptr<float>(), dy.data_ptr<float>(), dhf.data_ptr<float>(), dx.data_ptr<float>(),
                      ddt.data_ptr<float>(), dBh.data_ptr<float>(), dCh.data_ptr<float>(), dA.data(), dD.data(),
                      dh0.data_ptr<float>());
  });
  auto m1 = torch::randn({1024, 1024}), m2 = torch::randn({1024, 1024});
  const double mm = best([&] { auto c = torch::mm(m1, m2); });
  const double hpn = static_cast<double>(a.b * a.L * a.H * a.P * a.N);
  // A checksum so two builds can be compared for equal results.
  const double sum = y.sum().item<double>() + dx.sum().item<double>() + dBh.sum().item<double>() +
                     dCh.sum().item<double>() + ddt.sum().item<double>() + dh0.sum().item<double>() + dA[0] + dD[0];
  std::cout << nlohmann::json{{"threads", threads}, {"fwd_ms", fwd * 1e3}, {"bwd_ms", bwd * 1e3},
                              {"fwd_gflop_s", 5 * hpn / fwd / 1e9}, {"bwd_gflop_s", 14 * hpn / bwd / 1e9},
                              {"sgemm_gflop_s", 2.0 * 1024 * 1024 * 1024 / mm / 1e9}, {"checksum", sum}}.dump()
            << std::endl;
  return 0;
}
