// blocks/attention.cpp — grouped-query attention with its cache (attention.h).
#include "core/model/blocks/attention.h"

#include <torch/torch.h>

#include <cmath>

#include "core/base/error.h"
#include "core/model/dense.h"

namespace statescope {

int64_t AttentionConfig::rotary_dim() const {
  return static_cast<int64_t>(static_cast<double>(head_dim) * partial_rotary);
}

void AttentionConfig::validate(const std::string& source) const {
  auto positive = [&](int64_t v, const char* what) {
    if (v <= 0 || v > (int64_t{1} << 20)) throw Error(source + ": attention " + what + " must be in [1, 2^20], got " + std::to_string(v));
  };
  positive(hidden, "hidden size");
  positive(heads, "heads");
  positive(kv_heads, "key/value heads");
  positive(head_dim, "head_dim");
  if (heads % kv_heads != 0)
    throw Error(source + ": attention heads (" + std::to_string(heads) + ") must be a multiple of the key/value heads (" +
                std::to_string(kv_heads) + ")");
  if (rope_theta < 0 || !std::isfinite(rope_theta)) throw Error(source + ": rope_theta must be a finite number >= 0");
  if (!(partial_rotary > 0 && partial_rotary <= 1)) throw Error(source + ": partial_rotary_factor must be in (0, 1]");
  if (rope_theta > 0 && (rotary_dim() < 2 || rotary_dim() % 2 != 0))
    throw Error(source + ": the rotary dims (head_dim x partial_rotary_factor = " + std::to_string(rotary_dim()) +
                ") must be even and at least 2");
  if (!(norm_eps > 0 && norm_eps <= 1)) throw Error(source + ": the q/k norm's eps must be in (0, 1]");
  if (!std::isfinite(scaling) || scaling < 0) throw Error(source + ": the attention scale must be a finite number >= 0");
  if (!std::isfinite(key_multiplier)) throw Error(source + ": key_multiplier must be finite");
}

AttentionImpl::AttentionImpl(const AttentionConfig& c) : cfg(c) {
  const int64_t H = c.heads, KV = c.kv_heads, d = c.head_dim, D = c.hidden;
  auto linear = [&](const char* name, int64_t out, int64_t in) {
    return register_module(name, ParamHolder(std::vector<int64_t>{out, in}, c.bias, out));
  };
  q_proj = linear("q_proj", H * d * (c.output_gate ? 2 : 1), D);
  k_proj = linear("k_proj", KV * d, D);
  v_proj = linear("v_proj", KV * d, D);
  o_proj = linear("o_proj", D, H * d);
  if (c.qk_norm) {
    q_norm = register_module("q_norm", ParamHolder(std::vector<int64_t>{d}, false));
    k_norm = register_module("k_norm", ParamHolder(std::vector<int64_t>{d}, false));
  }
}

torch::Tensor apply_rope(const torch::Tensor& x, int64_t first, int64_t rotary_dim, double theta) {
  const int64_t L = x.size(1), half = rotary_dim / 2;
  auto inv_freq = 1.0 / torch::pow(torch::tensor(theta, torch::kFloat64),
                                    torch::arange(0, rotary_dim, 2, torch::kInt64).to(torch::kFloat32) / double(rotary_dim))
                            .to(torch::kFloat32);                                       // [half], float32 as transformers
  auto pos = torch::arange(first, first + L, torch::kInt64).to(torch::kFloat32);        // [L]
  auto freqs = torch::outer(pos, inv_freq);                                              // [L, half]
  auto emb = torch::cat({freqs, freqs}, -1);                                             // [L, rotary_dim]
  auto cos = emb.cos().to(x.dtype()).to(x.device()).view({1, L, 1, rotary_dim});
  auto sin = emb.sin().to(x.dtype()).to(x.device()).view({1, L, 1, rotary_dim});
  auto r = x.narrow(-1, 0, rotary_dim);
  auto rotated = torch::cat({-r.narrow(-1, half, half), r.narrow(-1, 0, half)}, -1);  // rotate_half
  auto out = r * cos + rotated * sin;
  return rotary_dim == x.size(-1) ? out : torch::cat({out, x.narrow(-1, rotary_dim, x.size(-1) - rotary_dim)}, -1);
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, KVCache* cache, int64_t window, AttentionProbe* probe) {
  const auto& c = cfg;
  const int64_t b = x.size(0), L = x.size(1), H = c.heads, KV = c.kv_heads, d = c.head_dim;
  const int64_t past = cache ? cache->length() : 0;
  const auto cdt = at_least_f32(x.scalar_type());
  // 1. Projections [b, L, heads, d]; Qwen's q_proj holds per head [q | gate].
  auto q = dense(x, q_proj->weight, q_proj->bias);
  torch::Tensor gate;
  if (c.output_gate) {
    auto qg = q.view({b, L, H, 2 * d});
    gate = qg.narrow(-1, d, d).reshape({b, L, H * d});  // [b, L, H d]
    q = qg.narrow(-1, 0, d);
  }
  q = q.reshape({b, L, H, d}).to(cdt);
  auto k = dense(x, k_proj->weight, k_proj->bias).view({b, L, KV, d}).to(cdt);
  auto v = dense(x, v_proj->weight, v_proj->bias).view({b, L, KV, d}).to(cdt);
  if (c.key_multiplier != 1.0) k = k * c.key_multiplier;
  // 2. Zero-centred q/k norms over d, then RoPE at the absolute positions.
  if (c.qk_norm) {
    q = rms_norm(q, 1.0 + q_norm->weight.to(cdt), c.norm_eps);
    k = rms_norm(k, 1.0 + k_norm->weight.to(cdt), c.norm_eps);
  }
  if (c.rope_theta > 0) {
    q = apply_rope(q, past, c.rotary_dim(), c.rope_theta);
    k = apply_rope(k, past, c.rotary_dim(), c.rope_theta);
  }
  // 3. The cache: this call's keys and values after the earlier ones.  [b, KV, T, d]
  auto kt = k.transpose(1, 2), vt = v.transpose(1, 2);
  if (cache) {
    if (past > 0) {
      if (cache->keys.size(0) != b || cache->keys.size(1) != KV || cache->keys.size(3) != d)
        throw Error("attention cache of shape " + std::to_string(cache->keys.size(0)) + " x " +
                    std::to_string(cache->keys.size(1)) + " x T x " + std::to_string(cache->keys.size(3)) +
                    " does not fit this layer (batch " + std::to_string(b) + ", " + std::to_string(KV) +
                    " key/value heads of " + std::to_string(d) + ")");
      kt = torch::cat({cache->keys.to(cdt), kt}, 2);
      vt = torch::cat({cache->values.to(cdt), vt}, 2);
    }
    cache->keys = kt, cache->values = vt;
  }
  // 4. Scores over the grouped heads (key/value head j serves query heads j r .. j r + r - 1), causal.
  const int64_t T = kt.size(2), r = H / KV;
  auto qh = q.transpose(1, 2);                                             // [b, H, L, d]
  auto kh = r > 1 ? kt.repeat_interleave(r, 1) : kt;                       // [b, H, T, d]
  auto vh = r > 1 ? vt.repeat_interleave(r, 1) : vt;
  const double scale = c.scaling > 0 ? c.scaling : 1.0 / std::sqrt(static_cast<double>(d));
  auto scores = torch::matmul(qh, kh.transpose(-1, -2)) * scale;           // [b, H, L, T]
  auto qpos = torch::arange(past, past + L, torch::kInt64).view({L, 1});
  auto kpos = torch::arange(0, T, torch::kInt64).view({1, T});
  auto hidden = kpos > qpos;                                               // causal
  if (window > 0) hidden = hidden | (kpos <= qpos - window);               // and the last `window` positions alone
  scores = scores.masked_fill(hidden.to(scores.device()), -std::numeric_limits<double>::infinity());
  auto p = torch::softmax(scores, -1);                                     // [b, H, L, T]
  if (probe) {  // what each query read: entropy in bits (0 log 0 = 0) and the mass on the first positions
    probe->entropy = (-torch::xlogy(p, p).sum(-1) / std::log(2.0)).transpose(1, 2);   // [b, L, H]
    probe->first = p.narrow(-1, 0, std::min(T, kFirstTokens)).sum(-1).transpose(1, 2);       // [b, L, H]
    if (probe->keep_qk) probe->q = qh.detach(), probe->k = kh.detach(), probe->scale = scale;
  }
  auto o = torch::matmul(p, vh);                                           // [b, H, L, d]
  o = o.transpose(1, 2).reshape({b, L, H * d});
  if (c.output_gate) o = o * torch::sigmoid(gate.to(cdt));
  return dense(o.to(x.scalar_type()), o_proj->weight, o_proj->bias);      // [b, L, hidden]
}

}  // namespace statescope
