// dense.cpp — the projections' matmul and the CPU bf16 weight cache.
#include "core/model/dense.h"

#include <c10/util/intrusive_ptr.h>

#include <mutex>
#include <unordered_map>

namespace statescope {
namespace {

thread_local bool t_cpu_bf16 = false;

// A bf16 copy of one weight, valid while the weight lives with the same storage and version (an
// optimizer step or an in-place load bumps the version; set_data changes the storage).
using WeakImpl = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;
struct Cached {
  WeakImpl owner;
  int64_t version;
  const void* data;
  torch::Tensor bf16;  // [out, in]
};

std::mutex g_mutex;
std::unordered_map<const c10::TensorImpl*, Cached> g_cache;

bool same(const Cached& c, const torch::Tensor& w) {
  auto alive = c.owner.lock();
  return alive.get() == w.unsafeGetTensorImpl() && c.version == static_cast<int64_t>(w._version()) &&
         c.data == w.data_ptr();
}

torch::Tensor cached_bf16(const torch::Tensor& w) {
  const c10::TensorImpl* key = w.unsafeGetTensorImpl();
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_cache.find(key);
    if (it != g_cache.end() && same(it->second, w)) return it->second.bf16;
  }
  Cached c{WeakImpl(w.getIntrusivePtr()), static_cast<int64_t>(w._version()), w.data_ptr(),
           w.detach().to(torch::kBFloat16).contiguous()};  // bf16 [out, in]
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto it = g_cache.begin(); it != g_cache.end();)  // weights that died: drop their copies
    it = it->second.owner.expired() ? g_cache.erase(it) : std::next(it);
  g_cache.insert_or_assign(key, c);
  return c.bf16;
}

}  // namespace

torch::Tensor dense(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  namespace F = torch::nn::functional;
  if (!t_cpu_bf16 || !x.device().is_cpu() || x.scalar_type() == torch::kBFloat16) return F::linear(x, w, b);
  const bool grad = torch::GradMode::is_enabled() && (x.requires_grad() || w.requires_grad() ||
                                                      (b.defined() && b.requires_grad()));
  const auto wb = grad ? w.to(torch::kBFloat16) : cached_bf16(w);       // [out, in]
  auto y = F::linear(x.to(torch::kBFloat16), wb).to(x.scalar_type());  // [..., out]
  return b.defined() ? y + b.to(x.scalar_type()) : y;
}

CpuBf16Scope::CpuBf16Scope() : was_(t_cpu_bf16) { t_cpu_bf16 = true; }
CpuBf16Scope::~CpuBf16Scope() { t_cpu_bf16 = was_; }
bool cpu_bf16_active() { return t_cpu_bf16; }

size_t dense_bf16_cached() {
  std::lock_guard<std::mutex> lock(g_mutex);
  size_t n = 0;
  for (const auto& kv : g_cache) n += !kv.second.owner.expired();
  return n;
}

ForwardPrecision::ForwardPrecision(bool mixed_bf16, const torch::Device& device) {
  if (mixed_bf16 && device.is_cpu()) cpu_.emplace();
  else if (mixed_bf16) autocast_.emplace(device.type());
}

torch::Tensor ForwardPrecision::logits(const torch::Tensor& logits) {
  if (!autocast_) return logits;
  autocast_.reset();
  return logits.to(torch::kFloat32);  // bf16 matmul, fp32 out
}

}  // namespace statescope
