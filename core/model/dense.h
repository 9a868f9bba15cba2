// dense.h — the models' projections, y = x W^T + b, in one place so that precision is one decision.
// fp32 (or the weights' dtype) as F::linear computes it, except inside a CpuBf16Scope on the CPU: there
// the matmul runs in bf16 (oneDNN's AMX / AVX512-BF16 kernels) and returns x's dtype, with
//   - inference (no grad): W read from a bf16 copy kept once per weight version (never cast per call);
//   - training: W cast per step inside the graph, so the backward matmuls run in bf16 too and the
//     gradients land on the fp32 master weights;
//   - the bias added in fp32 after the matmul.
#pragma once
#include <torch/torch.h>

#include <optional>

#include "core/model/recurrent_lm.h"  // AutocastScope

namespace statescope {

// x [..., in], w [out, in], b [out] or undefined -> [..., out] in x's dtype.
torch::Tensor dense(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b = {});

// The CPU bf16 path for the dense ops of this thread while the object lives (nests; restores).
class CpuBf16Scope {
 public:
  CpuBf16Scope();
  ~CpuBf16Scope();
  CpuBf16Scope(const CpuBf16Scope&) = delete;
  CpuBf16Scope& operator=(const CpuBf16Scope&) = delete;

 private:
  bool was_;
};
bool cpu_bf16_active();

// A model's forward in its precision (RecurrentLMImpl::mixed_bf16) while the object lives: on the CPU
// the dense ops in bf16 (the rest fp32 as it is), on a GPU bf16 autocast; nothing when off.
class ForwardPrecision {
 public:
  ForwardPrecision(bool mixed_bf16, const torch::Device& device);
  // Ends autocast and returns the logits in float32 (a GPU's bf16 matmul gives bf16); as they are otherwise.
  torch::Tensor logits(const torch::Tensor& logits);

 private:
  std::optional<AutocastScope> autocast_;
  std::optional<CpuBf16Scope> cpu_;
};

// How many bf16 weight copies are cached (tests: a second forward adds none).
size_t dense_bf16_cached();

}  // namespace statescope
