// test_util.h — comparisons that print the worst difference (llm.c style).
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <sstream>

#include "core/compute/runtime.h"
#include "core/model/checkpoint.h"
#include "core/model/mamba2/model.h"

namespace statescope::test {

// Acts as if the CPU had these bf16 units for one scope ("" = none, "emulated" = the bf16 path on any
// CPU), then detects again. bf16_here(): this CPU's own units, or emulated where it has none.
struct Bf16IsaGuard {
  explicit Bf16IsaGuard(const std::string& isa) { override_cpu_bf16_isa(isa); }
  ~Bf16IsaGuard() { override_cpu_bf16_isa("detect"); }
  Bf16IsaGuard(const Bf16IsaGuard&) = delete;
  Bf16IsaGuard& operator=(const Bf16IsaGuard&) = delete;
};
inline std::string bf16_here() {
  const std::string isa = cpu_bf16_isa();
  return isa.empty() ? "emulated" : isa;
}

// The Mamba-2 config of a model the test knows is a Mamba-2.
inline const Mamba2Config& m2cfg(const RecurrentLM& m) { return std::get<Mamba2Config>(m->model_config()); }

// Passes when |a - b| <= tol * (1 + |b|) everywhere; reports the worst absolute difference.
inline ::testing::AssertionResult close(const torch::Tensor& a, const torch::Tensor& b, double tol,
                                        const std::string& what = "") {
  if (!a.sizes().equals(b.sizes())) {
    std::ostringstream s;
    s << what << ": shape " << a.sizes() << " vs " << b.sizes();
    return ::testing::AssertionFailure() << s.str();
  }
  if (a.numel() == 0) return ::testing::AssertionSuccess();
  auto A = a.detach().to(torch::kFloat64), B = b.detach().to(torch::kFloat64);
  auto diff = (A - B).abs();
  auto bound = tol * (1 + B.abs());
  const double worst = diff.max().item<double>();
  const double excess = (diff - bound).max().item<double>();
  if (!std::isfinite(worst) || excess > 0)
    return ::testing::AssertionFailure() << what << ": worst |diff| " << worst << " exceeds tol " << tol
                                         << " (max |ref| " << B.abs().max().item<double>() << ")";
  return ::testing::AssertionSuccess() << what << ": worst |diff| " << worst;
}

#ifdef STATESCOPE_SOURCE_DIR
// A fresh directory holding a tiny random model over the BPE fixture's 4003 ids and its tokenizer.json.
inline void write_tiny_bpe_model(const std::string& dir, int64_t n_layer, uint64_t seed) {
  std::filesystem::remove_all(dir);
  Mamba2Config c;
  c.d_model = 32; c.n_layer = n_layer; c.d_state = 8; c.headdim = 8; c.vocab_size = 4003; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(seed);
  save_model_dir(m, dir);
  std::filesystem::copy(std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/tokenizer/tokenizer.json",
                        std::filesystem::path(dir) / "tokenizer.json");
}
#endif

}  // namespace statescope::test
