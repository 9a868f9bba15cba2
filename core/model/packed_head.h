// packed_head.h — logits = h W^T for an output head reused by many no-grad forwards (evaluation's
// segments, a benchmark's rounds) through MKL's packed-matrix gemm: W is packed into MKL's internal
// layout once and kept, where F::linear packs it again on every call. On the 2-core AMD EPYC the
// 130m head (512 rows x 768 x 50288) takes 208 instead of 235-240 ms at two threads, 417 instead of
// 440-455 at one, with the same logits (bit for bit there; bench/RESULTS.md). The price is the packed
// copy (238 MB for that head at 512 rows), so it is kept only for heads of at least
// kPackedHeadMinWeights weights and calls of at least kPackedHeadMinRows rows.
//
// The packed copy is keyed by the weight's storage, its version counter (every in-place change:
// an optimizer step, a checkpoint load), its shape, the rows and the intra-op thread count; any change
// packs again. MKL's cblas_sgemm_pack/compute are looked up at run time in the loaded LibTorch; a
// build without them (or without MKL as its BLAS) takes F::linear, as do gradients, other dtypes and devices.
#pragma once
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <mutex>

namespace statescope {

constexpr int64_t kPackedHeadMinWeights = int64_t{1} << 22;  // 4M weights (16 MB)
constexpr int64_t kPackedHeadMinRows = 64;

// True where the loaded LibTorch's BLAS is MKL with the packed-gemm entry points.
bool packed_gemm_available();

class PackedHead {
 public:
  PackedHead() = default;
  PackedHead(const PackedHead&) {}  // a copy (a cloned module) starts without a packed weight
  PackedHead& operator=(const PackedHead&) { return *this; }

  // h [..., K], W [N, K]: h W^T [..., N] through the packed weight, or an undefined tensor where the
  // packed path does not apply (see above); the caller then runs F::linear.
  torch::Tensor operator()(const torch::Tensor& h, const torch::Tensor& W);

  // How many times a weight was packed (tests).
  int64_t packs() const { return packs_; }

 private:
  struct Packed;
  std::mutex mu_;
  std::shared_ptr<const Packed> packed_;
  int64_t packs_ = 0;
};

}  // namespace statescope
