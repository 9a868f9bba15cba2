// packed_head.cpp — see packed_head.h.
#include "core/model/packed_head.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>
#include <dlfcn.h>

#include <vector>

namespace statescope {
namespace {

// MKL's CBLAS enumerations and entry points (mkl_cblas.h; 32-bit MKL_INT, the LP64 interface).
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112, kPacked = 151, kBMatrix = 162;
using PackSize = size_t (*)(int identifier, int m, int n, int k);
using Pack = void (*)(int layout, int identifier, int trans, int m, int n, int k, float alpha, const float* src,
                      int ld, float* dest);
using Compute = void (*)(int layout, int transa, int transb, int m, int n, int k, const float* a, int lda,
                         const float* b, int ldb, float beta, float* c, int ldc);

struct Mkl {
  PackSize size = nullptr;
  Pack pack = nullptr;
  Compute compute = nullptr;
  bool ok() const { return size && pack && compute; }
};

const Mkl& mkl() {
  static const Mkl m = [] {
    Mkl r;
    if (!at::globalContext().hasMKL()) return r;
    r.size = reinterpret_cast<PackSize>(dlsym(RTLD_DEFAULT, "cblas_sgemm_pack_get_size"));
    r.pack = reinterpret_cast<Pack>(dlsym(RTLD_DEFAULT, "cblas_sgemm_pack"));
    r.compute = reinterpret_cast<Compute>(dlsym(RTLD_DEFAULT, "cblas_sgemm_compute"));
    return r;
  }();
  return m;
}

constexpr int64_t kIntMax = 2147483647;

}  // namespace

struct PackedHead::Packed {
  const void* data = nullptr;  // the weight's first element
  int64_t version = -1, m = 0, n = 0, k = 0;
  int threads = 0;
  std::vector<float> buf;      // MKL's packed layout of W^T
};

bool packed_gemm_available() { return mkl().ok(); }

torch::Tensor PackedHead::operator()(const torch::Tensor& h, const torch::Tensor& W) {
  if (!mkl().ok() || torch::GradMode::is_enabled() || !h.device().is_cpu() || !W.device().is_cpu() ||
      h.scalar_type() != torch::kFloat32 || W.scalar_type() != torch::kFloat32 || W.dim() != 2 || h.dim() < 1 ||
      h.size(-1) != W.size(1) || W.numel() < kPackedHeadMinWeights)
    return {};
  const int64_t k = W.size(1), n = W.size(0), m = h.numel() / std::max<int64_t>(k, 1);
  if (m < kPackedHeadMinRows || m > kIntMax || n > kIntMax || k > kIntMax) return {};
  auto Wc = W.contiguous();                 // [N, K]
  auto x = h.reshape({m, k}).contiguous();  // [M, K]
  const int threads = at::get_num_threads();
  std::shared_ptr<const Packed> p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    p = packed_;
    if (!p || p->data != W.data_ptr() || p->version != W._version() || p->m != m || p->n != n || p->k != k ||
        p->threads != threads) {
      auto fresh = std::make_shared<Packed>();
      fresh->data = W.data_ptr(), fresh->version = W._version(), fresh->m = m, fresh->n = n, fresh->k = k;
      fresh->threads = threads;
      packed_.reset();  // the old copy goes before the new one is made (unless a caller still computes with it)
      const size_t bytes = mkl().size(kBMatrix, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
      fresh->buf.resize((bytes + sizeof(float) - 1) / sizeof(float));
      // B = W^T (K x N): W row-major [N, K] read transposed, leading dimension K.
      mkl().pack(kRowMajor, kBMatrix, kTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f,
                 Wc.data_ptr<float>(), static_cast<int>(k), fresh->buf.data());
      packed_ = p = std::move(fresh);
      ++packs_;
    }
  }
  auto out = torch::empty({m, n}, x.options());  // [M, N]
  mkl().compute(kRowMajor, kNoTrans, kPacked, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                x.data_ptr<float>(), static_cast<int>(k), p->buf.data(), static_cast<int>(k), 0.0f,
                out.data_ptr<float>(), static_cast<int>(n));
  auto sizes = h.sizes().vec();
  sizes.back() = n;
  return out.view(sizes);  // [..., N]
}

}  // namespace statescope
