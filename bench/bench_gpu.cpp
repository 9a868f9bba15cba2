// bench_gpu.cpp — issue 6's GPU numbers for a randomly initialised 130m-shaped Mamba-2:
//   copy     device-to-device copy bandwidth (the roofline reference for the scan kernels)
//   scan     the sequential and chunk-parallel CUDA scan kernels' achieved bandwidth (the bytes a
//            scan must move at least / time; the chunked one reads its inputs twice), and the
//            chunked backward's (it reads the inputs three times and dy twice)
//   train    post-training tokens/s at T = 2048 (fp32 and bf16 mixed precision; ATen scan vs the
//            fused kernels forward and backward)
//   eval     per-position evaluation tokens/s and peak CUDA memory at 16k and 256k tokens (segments
//            of 2048 with the state carried: memory must not grow with the length)
// Prints one JSON line per measurement. Without a GPU it says so and exits 0 (nothing measured).
// Usage: bench_gpu [--quick]   (--quick: smaller lengths, for a smoke run)
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/torch.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/model/mamba2/model.h"
#include "kernels/ssm_scan.h"

using namespace statescope;
using clk = std::chrono::steady_clock;
using nlohmann::json;

namespace {

double secs_since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

Mamba2Config shape_130m() {
  Mamba2Config c;
  c.d_model = 768; c.n_layer = 24; c.d_state = 128; c.headdim = 64; c.ngroups = 1;
  c.vocab_size = 50288; c.chunk_size = 256; c.tie_embeddings = true;
  return c;
}

double peak_mib() {
  auto s = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
  return s.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak / 1048576.0;
}
void reset_peak() { c10::cuda::CUDACachingAllocator::resetPeakStats(0); }

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (!torch::cuda::is_available()) {
    std::cout << json{{"bench", "gpu"}, {"skipped", "no CUDA device visible"}}.dump() << "\n";
    return 0;
  }
  const torch::Device dev("cuda:0");
  torch::NoGradGuard outer_ng;
  double copy_gbs = 0;

  {  // copy bandwidth: read + write of 1 GiB
    auto a = torch::empty({256 << 20}, torch::TensorOptions().device(dev));
    auto b = torch::empty_like(a);
    b.copy_(a);
    torch::cuda::synchronize();
    const int reps = 20;
    auto t0 = clk::now();
    for (int i = 0; i < reps; ++i) b.copy_(a);
    torch::cuda::synchronize();
    const double s = secs_since(t0);
    copy_gbs = 2.0 * a.nbytes() * reps / s / 1e9;
    std::cout << json{{"bench", "copy"}, {"GB_per_s", copy_gbs}}.dump() << std::endl;
  }
  {  // sequential scan kernel: b 8, L 4096, H 24, P 64, N 128 (the 130m layer shape)
    const int64_t b = 8, L = quick ? 1024 : 4096, H = 24, P = 64, N = 128, G = 1;
    auto o = torch::TensorOptions().device(dev);
    auto x = torch::randn({b, L, H, P}, o), dt = torch::rand({b, L, H}, o) * 0.1, A = -torch::rand({H}, o);
    auto B = torch::randn({b, L, G, N}, o), C = torch::randn({b, L, G, N}, o), h0 = torch::randn({b, H, P, N}, o);
    auto y = torch::empty_like(x), hf = torch::empty_like(h0), norm = torch::empty({b, L, H}, o);
    kernels::SsmScanArgs a;
    a.x = x.data_ptr<float>(); a.dt = dt.data_ptr<float>(); a.A = A.data_ptr<float>(); a.B = B.data_ptr<float>();
    a.C = C.data_ptr<float>(); a.h0 = h0.data_ptr<float>(); a.y = y.data_ptr<float>(); a.h_final = hf.data_ptr<float>();
    a.norm = norm.data_ptr<float>(); a.b = b; a.L = L; a.H = H; a.P = P; a.G = G; a.N = N;
    auto err = kernels::ssm_scan_fwd_cuda(a, nullptr);
    if (!err.empty()) { std::cerr << err << "\n"; return 1; }
    torch::cuda::synchronize();
    auto t0 = clk::now();
    const int reps = 3;
    for (int i = 0; i < reps; ++i) kernels::ssm_scan_fwd_cuda(a, nullptr);
    torch::cuda::synchronize();
    const double s = secs_since(t0) / reps;
    const double bytes = 4.0 * (x.numel() * 2 + dt.numel() + B.numel() + C.numel() + h0.numel() * 2 + norm.numel());
    std::cout << json{{"bench", "scan_sequential"}, {"b", b}, {"L", L}, {"ms", s * 1e3}, {"GB_per_s", bytes / s / 1e9},
                      {"of_copy", bytes / s / 1e9 / copy_gbs}}.dump() << std::endl;
    for (int64_t Q : {64, 256}) {  // chunk-parallel: same minimal bytes, more parallelism
      auto ws = torch::empty({kernels::ssm_scan_chunked_workspace_floats(a, Q)}, o);
      err = kernels::ssm_scan_chunked_fwd_cuda(a, Q, ws.data_ptr<float>(), nullptr);
      if (!err.empty()) { std::cerr << err << "\n"; return 1; }
      torch::cuda::synchronize();
      auto t1 = clk::now();
      for (int i = 0; i < reps; ++i) kernels::ssm_scan_chunked_fwd_cuda(a, Q, ws.data_ptr<float>(), nullptr);
      torch::cuda::synchronize();
      const double sc = secs_since(t1) / reps;
      std::cout << json{{"bench", "scan_chunked"}, {"Q", Q}, {"b", b}, {"L", L}, {"ms", sc * 1e3},
                        {"GB_per_s", bytes / sc / 1e9}, {"of_copy", bytes / sc / 1e9 / copy_gbs},
                        {"speedup_vs_sequential", s / sc}}.dump() << std::endl;
    }
    {  // chunked backward at its model chunk (64): minimal bytes = read x dt B C h0 dy dh_final, write the grads
      const int64_t Q = 64;
      auto dy = torch::randn_like(y), dhf = torch::randn_like(hf);
      auto dx = torch::empty_like(x), ddt = torch::empty_like(dt), dA = torch::empty_like(A);
      auto dB = torch::empty_like(B), dC = torch::empty_like(C), dh0 = torch::empty_like(h0);
      kernels::SsmScanGrads g;
      g.dy = dy.data_ptr<float>(); g.dh_final = dhf.data_ptr<float>(); g.dx = dx.data_ptr<float>();
      g.ddt = ddt.data_ptr<float>(); g.dA = dA.data_ptr<float>(); g.dB = dB.data_ptr<float>();
      g.dC = dC.data_ptr<float>(); g.dh0 = dh0.data_ptr<float>();
      auto ws = torch::empty({kernels::ssm_scan_chunked_bwd_workspace_floats(a, Q)}, o);
      err = kernels::ssm_scan_chunked_bwd_cuda(a, g, Q, ws.data_ptr<float>(), nullptr);
      if (!err.empty()) { std::cerr << err << "\n"; return 1; }
      torch::cuda::synchronize();
      auto t1 = clk::now();
      for (int i = 0; i < reps; ++i) kernels::ssm_scan_chunked_bwd_cuda(a, g, Q, ws.data_ptr<float>(), nullptr);
      torch::cuda::synchronize();
      const double sb = secs_since(t1) / reps;
      const double bb = 4.0 * (2 * x.numel() + 2 * dt.numel() + 2 * B.numel() + 2 * C.numel() + 3 * h0.numel() + dy.numel());
      std::cout << json{{"bench", "scan_backward"}, {"Q", Q}, {"b", b}, {"L", L}, {"ms", sb * 1e3},
                        {"GB_per_s", bb / sb / 1e9}, {"of_copy", bb / sb / 1e9 / copy_gbs}}.dump() << std::endl;
    }
  }
  for (const bool fused : {false, true})
  for (const bool bf16 : {false, true}) {  // post-training step at T = 2048
    torch::AutoGradMode on(true);
    RecurrentLM m = Mamba2LM(shape_130m());
    m->reset_parameters(0, 1.0, 16.0);
    m->to(dev);
    m->mixed_bf16 = bf16;
    torch::optim::AdamW opt(m->parameters(), torch::optim::AdamWOptions(1e-4));
    const int64_t B = quick ? 2 : 8, T = 2048;
    auto tok = torch::randint(0, 50280, {B, T + 1}, torch::TensorOptions().dtype(torch::kInt64).device(dev));
    ForwardOptions fo;
    fo.scan = fused ? ScanImpl::Fused : ScanImpl::Chunked;
    auto step = [&] {
      auto out = m->forward(tok.narrow(1, 0, T), nullptr, fo);
      auto loss = torch::nn::functional::cross_entropy(out.logits.reshape({-1, 50288}), tok.narrow(1, 1, T).reshape({-1}));
      opt.zero_grad();
      loss.backward();
      opt.step();
    };
    step();
    torch::cuda::synchronize();
    reset_peak();
    const int reps = quick ? 2 : 5;
    auto t0 = clk::now();
    for (int i = 0; i < reps; ++i) step();
    torch::cuda::synchronize();
    const double s = secs_since(t0);
    std::cout << json{{"bench", "train"}, {"precision", bf16 ? "bf16" : "fp32"}, {"impl", fused ? "fused scan" : "aten"},
                      {"T", T}, {"batch", B}, {"tokens_per_s", B * T * reps / s}, {"peak_MiB", peak_mib()}}.dump() << std::endl;
  }
  {  // evaluation: per-position loss over long sequences in segments, state carried
    RecurrentLM m = Mamba2LM(shape_130m());
    m->reset_parameters(0, 1.0, 16.0);
    m->to(dev);
    for (const bool fused : {false, true})
    for (const int64_t len : quick ? std::vector<int64_t>{4096, 16384} : std::vector<int64_t>{16384, 262144}) {
      const int64_t seg = 2048;
      auto tok = torch::randint(0, 50280, {1, len + 1}, torch::TensorOptions().dtype(torch::kInt64).device(dev));
      reset_peak();
      torch::cuda::synchronize();
      auto t0 = clk::now();
      ModelState st;
      auto losses = torch::empty({len}, torch::TensorOptions().device(dev));
      for (int64_t s0 = 0; s0 < len; s0 += seg) {
        const int64_t n = std::min(seg, len - s0);
        ForwardOptions fo;
        fo.state_norms = true;
        fo.scan = fused ? ScanImpl::Fused : ScanImpl::Chunked;
        auto out = m->forward(tok.narrow(1, s0, n), st.empty() ? nullptr : &st, fo);
        losses.narrow(0, s0, n).copy_(torch::nn::functional::cross_entropy(
            out.logits[0], tok[0].narrow(0, s0 + 1, n),
            torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone)));
        st = out.final_state;
      }
      torch::cuda::synchronize();
      const double s = secs_since(t0);
      std::cout << json{{"bench", "eval"}, {"impl", fused ? "fused scan" : "aten"}, {"tokens", len}, {"segment", seg}, {"tokens_per_s", len / s},
                        {"peak_MiB", peak_mib()}, {"mean_loss", losses.mean().item<double>()}}.dump() << std::endl;
    }
  }
  return 0;
}
