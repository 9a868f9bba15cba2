// gla/gla_scan.cpp — the sequential and chunked GLA recurrences (gla_scan.h).
#include "core/model/gla/gla_scan.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/intervention.h"  // clip_state
#include "core/model/recurrent_lm.h"   // at_least_f32

namespace statescope {
namespace {

void check_inputs(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& g,
                  const torch::Tensor& h0) {
  if (q.dim() != 4 || !k.sizes().equals(q.sizes()) || !g.sizes().equals(q.sizes()) || v.dim() != 4 ||
      v.size(0) != q.size(0) || v.size(1) != q.size(1) || v.size(2) != q.size(2))
    throw Error("gla scan: q, k, g must be [b, L, H, K] and v [b, L, H, V] alike");
  if (h0.defined() && !h0.sizes().equals({q.size(0), q.size(2), q.size(3), v.size(3)}))
    throw Error("gla scan: initial state must be [b, H, K, V]");
}

struct Prepared {
  torch::Tensor q, k, v, g, h;  // inputs in the compute dtype, h the start state [b, H, K, V]
};

Prepared prepare(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& g,
                 const torch::Tensor& h0) {
  check_inputs(q, k, v, g, h0);
  const auto dt = at_least_f32(q.scalar_type());
  Prepared p{q.to(dt), k.to(dt), v.to(dt), g.to(dt), {}};
  p.h = h0.defined() ? h0.to(dt) : torch::zeros({q.size(0), q.size(2), q.size(3), v.size(3)}, q.options().dtype(dt));
  return p;
}

}  // namespace

GLAScanOutputs gla_scan_sequential(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                                   const torch::Tensor& g_in, const torch::Tensor& h0, bool norms,
                                   const torch::Tensor& max_norm) {
  auto [q, k, v, g, h] = prepare(q_in, k_in, v_in, g_in, h0);
  const int64_t L = q.size(1);
  std::vector<torch::Tensor> os, ns, ds;
  for (int64_t t = 0; t < L; ++t) {
    auto prev = h;
    auto kt = k.select(1, t), vt = v.select(1, t), qt = q.select(1, t);       // [b, H, K], [b, H, V]
    h = h * g.select(1, t).exp().unsqueeze(-1) + kt.unsqueeze(-1) * vt.unsqueeze(-2);  // [b, H, K, V]
    if (max_norm.defined()) h = clip_state(h, max_norm);
    os.push_back((qt.unsqueeze(-1) * h).sum(-2));                              // [b, H, V]
    if (norms) {
      ns.push_back(h.square().sum({-2, -1}).sqrt());                            // [b, H]
      ds.push_back((h - prev).square().sum({-3, -2, -1}).sqrt());               // [b]
    }
  }
  GLAScanOutputs out;
  out.o = L ? torch::stack(os, 1) : torch::zeros({q.size(0), 0, q.size(2), v.size(3)}, q.options());
  out.final_state = h;
  if (norms) {
    out.norms = L ? torch::stack(ns, 1) : torch::zeros({q.size(0), 0, q.size(2)}, q.options());
    out.delta_norms = L ? torch::stack(ds, 1) : torch::zeros({q.size(0), 0}, q.options());
  }
  return out;
}

GLAScanOutputs gla_scan_chunked(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                                const torch::Tensor& g_in, const torch::Tensor& h0, int64_t chunk, bool norms) {
  if (chunk < 1) throw Error("gla scan: chunk size must be positive");
  auto [q, k, v, g, h] = prepare(q_in, k_in, v_in, g_in, h0);
  const int64_t L = q.size(1);
  std::vector<torch::Tensor> os, ns, ds;
  for (int64_t a = 0; a < L; a += chunk) {
    const int64_t C = std::min(chunk, L - a);
    auto qc = q.narrow(1, a, C), kc = k.narrow(1, a, C), vc = v.narrow(1, a, C);    // [b, C, H, K|V]
    auto G = g.narrow(1, a, C).cumsum(1);                                            // [b, C, H, K] inclusive
    // decay[b, t, s, H, K] = exp(G_t - G_s) for s <= t, else 0 (masked before exp: no inf, no NaN grads)
    auto causal = torch::ones({C, C}, torch::TensorOptions().dtype(torch::kBool).device(q.device())).tril();
    auto diff = (G.unsqueeze(2) - G.unsqueeze(1)).masked_fill(~causal.view({1, C, C, 1, 1}), -INFINITY);
    auto decay = diff.exp();                                                          // [b, C, C, H, K]
    // Within the chunk: A[b, H, t, s] = sum_k q_t k_s decay; o += A v. From the start state: (q exp(G_t)) S.
    auto A = torch::einsum("bthk,bshk,btshk->bhts", {qc, kc, decay});
    auto o = torch::einsum("bhts,bshv->bthv", {A, vc}) +
             torch::einsum("bthk,bhkv->bthv", {qc * G.exp(), h});                    // [b, C, H, V]
    os.push_back(o);
    if (norms) {  // every S_t of the chunk [b, C, H, K, V]
      auto S = torch::einsum("btshk,bshk,bshv->bthkv", {decay, kc, vc}) + G.exp().unsqueeze(-1) * h.unsqueeze(1);
      ns.push_back(S.square().sum({-2, -1}).sqrt());                                 // [b, C, H]
      auto prev = torch::cat({h.unsqueeze(1), S.narrow(1, 0, C - 1)}, 1);
      ds.push_back((S - prev).square().sum({-3, -2, -1}).sqrt());                    // [b, C]
    }
    // End state: exp(G_last) S + sum_s (k_s exp(G_last - G_s)) v_s^T.
    auto last = G.select(1, C - 1);                                                  // [b, H, K]
    auto carry = decay.select(1, C - 1);                                             // [b, C(s), H, K]
    h = h * last.exp().unsqueeze(-1) + torch::einsum("bshk,bshv->bhkv", {kc * carry, vc});
  }
  GLAScanOutputs out;
  out.o = L ? torch::cat(os, 1) : torch::zeros({q.size(0), 0, q.size(2), v.size(3)}, q.options());
  out.final_state = h;
  if (norms) {
    out.norms = L ? torch::cat(ns, 1) : torch::zeros({q.size(0), 0, q.size(2)}, q.options());
    out.delta_norms = L ? torch::cat(ds, 1) : torch::zeros({q.size(0), 0}, q.options());
  }
  return out;
}

}  // namespace statescope
