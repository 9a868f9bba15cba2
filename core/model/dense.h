// dense.h — the models' projections, y = x W^T + b, in one place so that precision is one decision.
// fp32 (or the weights' dtype) as F::linear computes it, except inside a CpuBf16Scope on the CPU: there
// the matmul runs in bf16 (oneDNN's AMX / AVX512-BF16 kernels) and returns x's dtype, with
//   - inference (no grad): W read from a bf16 copy kept once per weight version (never cast per call);
//   - training: W cast per step inside the graph, so the backward matmuls run in bf16 too and the
//     gradients land on the fp32 master weights;
//   - the bias added in fp32 after the matmul.
#pragma once
#include <torch/torch.h>

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

// How many bf16 weight copies are cached (tests: a second forward adds none).
size_t dense_bf16_cached();

}  // namespace statescope
