// bench_forward.cpp — forward and forward+backward tokens/s of statescope's Mamba-2 on CPU.
//
// Usage: bench_forward SHAPE_JSON_FILE SHAPE_NAME THREADS ITERS
// Prints one JSON line. bench/run_forward.sh runs this and transformers' Mamba2 (bench/hf_forward.py)
// on the same shapes, torch build and thread count, and prints the ratios.
#include <torch/torch.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/model/mamba2_model.h"

using namespace statescope;

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::cerr << "usage: bench_forward SHAPES.json NAME THREADS ITERS [aten|fused]\n";
    return 2;
  }
  nlohmann::json all;
  std::ifstream(argv[1]) >> all;
  const auto s = all.at(argv[2]);
  const int threads = std::stoi(argv[3]), iters = std::stoi(argv[4]);
  torch::set_num_threads(threads);
  Mamba2Config c;
  c.d_model = s["d_model"]; c.n_layer = s["n_layer"]; c.d_state = s["d_state"]; c.headdim = s["headdim"];
  c.vocab_size = s["vocab_size"]; c.chunk_size = s["chunk_size"]; c.ngroups = 1; c.tie_embeddings = true;
  const int64_t B = s["batch"], L = s["length"];
  Mamba2LM model(c);
  torch::manual_seed(0);
  auto tokens = torch::randint(0, c.vocab_size, {B, L}, torch::kInt64);
  const std::string scan = argc == 6 ? argv[5] : "aten";  // fused on the CPU: the plain-loop scan (cpu_scan.h)
  ForwardOptions fo;
  fo.scan = scan == "fused" ? ScanImpl::Fused : ScanImpl::Chunked;
  using clk = std::chrono::steady_clock;
  auto time_it = [&](bool backward) {
    double best = 1e30;
    for (int i = 0; i < iters + 1; ++i) {  // first iteration is warm-up
      const auto t0 = clk::now();
      if (backward) {
        auto out = model->forward(tokens, nullptr, fo);
        auto loss = torch::nn::functional::cross_entropy(out.logits.reshape({-1, c.vocab_size}), tokens.reshape({-1}));
        loss.backward();
        model->zero_grad();
      } else {
        torch::NoGradGuard ng;
        model->forward(tokens, nullptr, fo);
      }
      const double dt = std::chrono::duration<double>(clk::now() - t0).count();
      if (i > 0) best = std::min(best, dt);
    }
    return static_cast<double>(B * L) / best;
  };
  const double fwd = time_it(false), fwdbwd = time_it(true);
  std::cout << nlohmann::json{{"impl", "statescope-" + scan}, {"shape", argv[2]}, {"threads", threads},
                              {"fwd_tok_s", fwd}, {"fwdbwd_tok_s", fwdbwd}}.dump()
            << std::endl;
  return 0;
}
