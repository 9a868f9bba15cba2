// bench_forward.cpp — forward and forward+backward tokens/s of statescope's Mamba-2 or Mamba-1 on CPU.
//
// Usage: bench_forward SHAPE_JSON_FILE SHAPE_NAME THREADS ITERS
// Prints one JSON line. bench/run_forward.sh runs this and transformers' Mamba2 or Mamba
// (bench/hf_forward.py) on the same shapes, torch build and thread count, and prints the ratios. A
// shape with "arch": "mamba1" is a Mamba-1.
// For the side-by-side with llama.cpp (bench/run_llamacpp.sh), three environment entries:
//   BENCH_CHECKPOINT=DIR   load the weights from DIR (a save_pretrained directory) instead of a random init
//                          (the shape's batch and length still say the tokens' shape)
//   BENCH_TOKENS=FILE      the tokens, int32 little-endian, batch x length (default: seeded random ids)
//   BENCH_LOGITS_OUT=FILE  write the forward's logits there, float32, (batch, length, vocab)
// And BENCH_PRECISION=bf16: the CPU bf16 path (core/model/dense.h) on whatever bf16 units the CPU has
// (the JSON line names them), fp32 master weights as in training; a CPU with neither runs fp32, as
// statescope does (the line's "precision" says so).
// BENCH_DENSE=1 (issue 55, "nothing got slower in fp32"): the projections' fp32 matmul before and
// after the bf16 change in one run: F::linear, which every projection called before, against dense()
// (core/model/dense.h), which they call now, at the model's in_proj and head shapes on batch x length
// rows; alternating, best of ITERS + 1 each; one JSON line with the times and the ratios.
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/base/memory_tuning.h"
#include "core/compute/runtime.h"
#include "core/model/checkpoint.h"
#include "core/model/dense.h"
#include "core/model/mamba1/model.h"
#include "core/model/mamba2/model.h"

using namespace statescope;

namespace {

// FLOPs per trained token (a multiply-add counts 2), by op, forward:
//   per layer: in_proj 2 d R, conv 2 K Cd, scan 5 H P N (state update 3, output 2) + 2 H P (D x),
//              gate + norm 8 Di, out_proj 2 Di d, the residual RMSNorm 4 d; the LM head 2 d V.
// Training (forward + backward): every matmul, conv and elementwise op 3x its forward (the forward
// and two backward products); the scan 19 H P N (forward 5, the backward's recompute 3, adjoint 11).
struct Flops {
  double fwd = 0, train = 0;
};

Flops flops_per_token(const Mamba2Config& c) {
  const double d = c.d_model, R = c.in_proj_rows(), K = c.d_conv, Cd = c.conv_dim(), Di = c.d_inner();
  const double H = c.nheads(), P = c.headdim, N = c.d_state, V = c.vocab_size;
  const double dense = 2 * d * R + 2 * K * Cd + 2 * H * P + 8 * Di + 2 * Di * d + 4 * d;
  Flops f;
  f.fwd = c.n_layer * (dense + 5 * H * P * N) + 2 * d * V;
  f.train = 3 * (c.n_layer * dense + 2 * d * V) + c.n_layer * 19 * H * P * N;
  return f;
}

// Mamba-1, per layer: in_proj 2 d 2Di, conv 2 K Di, x_proj 2 Di (R + 2N), dt_proj 2 R Di, the scan
// 5 Di N (decay, state update, output) + 2 Di (D x), gate 4 Di, out_proj 2 Di d, RMSNorm 4 d; the LM
// head 2 d V. Training: 3x the dense part, the scan 19 Di N as for Mamba-2.
Flops flops_per_token(const Mamba1Config& c) {
  const double d = c.d_model, Di = c.d_inner(), K = c.d_conv, R = c.rank(), N = c.d_state, V = c.vocab_size;
  const double dense = 4 * d * Di + 2 * K * Di + 2 * Di * (R + 2 * N) + 2 * R * Di + 2 * Di + 4 * Di + 2 * Di * d + 4 * d;
  Flops f;
  f.fwd = c.n_layer * (dense + 5 * Di * N) + 2 * d * V;
  f.train = 3 * (c.n_layer * dense + 2 * d * V) + c.n_layer * 19 * Di * N;
  return f;
}

// One core's (THREADS') fp32 matmul rate: a 1024^3 sgemm through the same LibTorch, best of 5. FLOP/s.
double sgemm_rate() {
  auto a = torch::randn({1024, 1024}), b = torch::randn({1024, 1024});
  double best = 1e30;
  for (int i = 0; i < 6; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto c = torch::mm(a, b);
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) best = std::min(best, dt);
  }
  return 2.0 * 1024 * 1024 * 1024 / best;
}

}  // namespace

int main(int argc, char** argv) {
  tune_malloc_for_tensors();  // as the CLI and the app do
  if (argc != 5 && argc != 6) {
    std::cerr << "usage: bench_forward SHAPES.json NAME THREADS ITERS [aten|fused]\n";
    return 2;
  }
  nlohmann::json all;
  std::ifstream(argv[1]) >> all;
  const auto s = all.at(argv[2]);
  const int threads = std::stoi(argv[3]), iters = std::stoi(argv[4]);
  torch::set_num_threads(threads);
  const bool mamba1 = s.value("arch", std::string("mamba2")) == "mamba1";
  const int64_t B = s["batch"], L = s["length"], V = s["vocab_size"];
  RecurrentLM model{nullptr};
  Flops f;
  const char* checkpoint = std::getenv("BENCH_CHECKPOINT");
  if (checkpoint) {
    model = load_model_dir(checkpoint, default_compute());
    if (const auto* c1 = std::get_if<Mamba1Config>(&model->model_config())) {
      f = flops_per_token(*c1);
    } else {
      f = flops_per_token(std::get<Mamba2Config>(model->model_config()));
    }
  } else if (mamba1) {
    Mamba1Config c;
    c.d_model = s["d_model"]; c.n_layer = s["n_layer"]; c.d_state = s["d_state"]; c.vocab_size = V;
    c.tie_embeddings = true;
    model = Mamba1LM(c);
    f = flops_per_token(c);
  } else {
    Mamba2Config c;
    c.d_model = s["d_model"]; c.n_layer = s["n_layer"]; c.d_state = s["d_state"]; c.headdim = s["headdim"];
    c.vocab_size = V; c.chunk_size = s["chunk_size"]; c.ngroups = 1; c.tie_embeddings = true;
    model = Mamba2LM(c);
    f = flops_per_token(c);
  }
  const char* precision_env = std::getenv("BENCH_PRECISION");
  // bf16 as statescope runs it (core/compute/runtime.h): on a CPU with neither AMX nor AVX512-BF16 it
  // falls back to fp32 (bf16 there is emulated, many times slower); the JSON line says so.
  std::string precision = precision_env ? precision_env : "fp32";
  if (precision == "bf16" && cpu_bf16_isa().empty()) precision = "fp32 (bf16 asked: no bf16 units)";
  model->mixed_bf16 = precision == "bf16";
  torch::manual_seed(0);
  auto tokens = torch::randint(0, V, {B, L}, torch::kInt64);  // (B, L)
  if (const char* path = std::getenv("BENCH_TOKENS")) {
    std::vector<int32_t> ids(static_cast<size_t>(B * L));
    std::ifstream in(path, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(ids.data()), static_cast<std::streamsize>(ids.size() * 4))) {
      std::cerr << path << ": expected " << B * L << " int32 tokens\n";
      return 2;
    }
    tokens = torch::from_blob(ids.data(), {B, L}, torch::kInt32).to(torch::kInt64);
  }
  if (std::getenv("BENCH_DENSE")) {
    torch::NoGradGuard ng;
    namespace F = torch::nn::functional;
    torch::Tensor w_in;
    for (const auto& p : model->named_parameters())
      if (p.key().find("in_proj.weight") != std::string::npos) {
        w_in = p.value();
        break;
      }
    const std::vector<std::pair<std::string, torch::Tensor>> ws{{"in_proj", w_in}, {"head", model->output_weight()}};
    auto x = torch::randn({B * L, w_in.size(1)});  // [rows, d_model]
    nlohmann::json out{{"shape", argv[2]}, {"threads", threads}, {"rows", B * L}};
    using clock = std::chrono::steady_clock;
    for (const auto& [name, w] : ws) {
      double lin = 1e30, den = 1e30;
      for (int r = 0; r < 2 * (iters + 1); ++r) {
        const bool first_dense = r % 2;
        auto t0 = clock::now();
        auto y0 = first_dense ? dense(x, w) : F::linear(x, w);
        auto t1 = clock::now();
        auto y1 = first_dense ? F::linear(x, w) : dense(x, w);
        auto t2 = clock::now();
        const double a = std::chrono::duration<double>(t1 - t0).count(), b = std::chrono::duration<double>(t2 - t1).count();
        if (r < 2) continue;  // warm-up
        den = std::min(den, first_dense ? a : b), lin = std::min(lin, first_dense ? b : a);
      }
      out[name + "_linear_ms"] = lin * 1e3, out[name + "_dense_ms"] = den * 1e3, out[name + "_dense_over_linear"] = den / lin;
    }
    std::cout << out.dump() << std::endl;
    return 0;
  }
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
        auto loss = torch::nn::functional::cross_entropy(out.logits.reshape({-1, V}), tokens.reshape({-1}));
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
  const bool training_only = std::getenv("BENCH_TRAINING_ONLY") != nullptr;  // for profiling a training step alone
  const double fwd = training_only ? 0.0 : time_it(false);
  if (const char* path = std::getenv("BENCH_LOGITS_OUT")) {
    torch::NoGradGuard ng;
    auto logits = model->forward(tokens, nullptr, fo).logits.to(torch::kFloat32).contiguous();  // (B, L, V)
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(logits.data_ptr<float>()), static_cast<std::streamsize>(logits.numel() * 4));
  }
  if (std::getenv("BENCH_FORWARD_ONLY")) {  // for profiling the forward alone (perf record)
    std::cout << nlohmann::json{{"shape", argv[2]}, {"threads", threads}, {"precision", precision}, {"fwd_tok_s", fwd}}.dump()
              << std::endl;
    return 0;
  }
  const double fwdbwd = time_it(true);
  const double peak = sgemm_rate();
  std::cout << nlohmann::json{{"impl", "statescope-" + scan}, {"arch", mamba1 ? "mamba1" : "mamba2"}, {"shape", argv[2]}, {"threads", threads},
                              {"precision", precision}, {"bf16_isa", precision == "bf16" ? cpu_bf16_isa() : ""},
                              {"fwd_tok_s", fwd}, {"fwdbwd_tok_s", fwdbwd}, {"fwd_flop_per_token", f.fwd},
                              {"train_flop_per_token", f.train}, {"sgemm_flop_s", peak},
                              {"train_share_of_sgemm", fwdbwd * f.train / peak}}.dump()
            << std::endl;
  return 0;
}
