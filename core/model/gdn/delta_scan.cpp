// gdn/delta_scan.cpp — the sequential and chunked gated delta rule (delta_scan.h).
#include "core/model/gdn/delta_scan.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/intervention.h"  // clip_state
#include "core/model/recurrent_lm.h"   // at_least_f32

namespace statescope {
namespace {

struct Prepared {
  torch::Tensor q, k, v, g, beta, h;  // inputs in the compute dtype, h the start state [b, H, K, V]
};

Prepared prepare(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& g,
                 const torch::Tensor& beta, const torch::Tensor& h0) {
  if (q.dim() != 4 || !k.sizes().equals(q.sizes()) || v.dim() != 4 || v.size(0) != q.size(0) ||
      v.size(1) != q.size(1) || v.size(2) != q.size(2) || !g.sizes().equals(q.sizes().slice(0, 3)) ||
      !beta.sizes().equals(g.sizes()))
    throw Error("delta scan: q, k must be [b, L, H, K], v [b, L, H, V], g and beta [b, L, H] alike");
  if (h0.defined() && !h0.sizes().equals({q.size(0), q.size(2), q.size(3), v.size(3)}))
    throw Error("delta scan: initial state must be [b, H, K, V]");
  const auto dt = at_least_f32(q.scalar_type());
  Prepared p{q.to(dt), k.to(dt), v.to(dt), g.to(dt), beta.to(dt), {}};
  p.h = h0.defined() ? h0.to(dt) : torch::zeros({q.size(0), q.size(2), q.size(3), v.size(3)}, q.options().dtype(dt));
  return p;
}

DeltaScanOutputs empty(const Prepared& p, bool norms) {
  DeltaScanOutputs out;
  const int64_t b = p.q.size(0), H = p.q.size(2);
  out.o = torch::zeros({b, 0, H, p.v.size(3)}, p.q.options());
  out.final_state = p.h;
  if (norms) out.norms = torch::zeros({b, 0, H}, p.q.options()), out.delta_norms = torch::zeros({b, 0}, p.q.options());
  return out;
}

}  // namespace

DeltaScanOutputs delta_scan_sequential(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                                       const torch::Tensor& g_in, const torch::Tensor& beta_in, const torch::Tensor& h0,
                                       bool norms, const torch::Tensor& max_norm) {
  auto p = prepare(q_in, k_in, v_in, g_in, beta_in, h0);
  const int64_t L = p.q.size(1);
  if (L == 0) return empty(p, norms);
  auto h = p.h;
  std::vector<torch::Tensor> os, ns, ds;
  for (int64_t t = 0; t < L; ++t) {
    auto prev = h;
    auto kt = p.k.select(1, t), vt = p.v.select(1, t), qt = p.q.select(1, t);  // [b, H, K], [b, H, V]
    h = h * p.g.select(1, t).exp().unsqueeze(-1).unsqueeze(-1);                // decay first
    auto u = (vt - (h * kt.unsqueeze(-1)).sum(-2)) * p.beta.select(1, t).unsqueeze(-1);  // [b, H, V]
    h = h + kt.unsqueeze(-1) * u.unsqueeze(-2);                                // [b, H, K, V]
    if (max_norm.defined()) h = clip_state(h, max_norm);
    os.push_back((qt.unsqueeze(-1) * h).sum(-2));                              // [b, H, V] from the updated state
    if (norms) {
      ns.push_back(h.square().sum({-2, -1}).sqrt());                            // [b, H]
      ds.push_back((h - prev).square().sum({-3, -2, -1}).sqrt());               // [b]
    }
  }
  DeltaScanOutputs out;
  out.o = torch::stack(os, 1);
  out.final_state = h;
  if (norms) out.norms = torch::stack(ns, 1), out.delta_norms = torch::stack(ds, 1);
  return out;
}

DeltaScanOutputs delta_scan_chunked(const torch::Tensor& q_in, const torch::Tensor& k_in, const torch::Tensor& v_in,
                                    const torch::Tensor& g_in, const torch::Tensor& beta_in, const torch::Tensor& h0,
                                    int64_t chunk, bool norms) {
  if (chunk < 1) throw Error("delta scan: chunk size must be positive");
  auto p = prepare(q_in, k_in, v_in, g_in, beta_in, h0);
  const int64_t L = p.q.size(1);
  if (L == 0) return empty(p, norms);
  // Heads first: [b, H, L, K|V], g and beta [b, H, L].
  auto q = p.q.transpose(1, 2), k = p.k.transpose(1, 2), v = p.v.transpose(1, 2);
  auto g = p.g.transpose(1, 2), beta = p.beta.transpose(1, 2);
  auto h = p.h;
  std::vector<torch::Tensor> os, ns, ds;
  const auto bool_opts = torch::TensorOptions().dtype(torch::kBool).device(q.device());
  for (int64_t a = 0; a < L; a += chunk) {
    const int64_t C = std::min(chunk, L - a);
    auto qc = q.narrow(2, a, C), kc = k.narrow(2, a, C), vc = v.narrow(2, a, C);  // [b, H, C, K|V]
    auto bc = beta.narrow(2, a, C);                                                 // [b, H, C]
    auto G = g.narrow(2, a, C).cumsum(-1);                                          // [b, H, C] inclusive
    auto eG = G.exp();
    // D[t, s] = exp(G_t - G_s) for s <= t, else 0 (masked before exp: no inf, no NaN gradients).
    auto causal = torch::ones({C, C}, bool_opts).tril();
    auto D = (G.unsqueeze(-1) - G.unsqueeze(-2)).masked_fill(~causal, -INFINITY).exp();  // [b, H, C, C]
    // (I + A) U = beta (V - exp(G) K S_0), A strictly lower: A[t, s] = beta_t D[t, s] k_t.k_s.
    auto strict = torch::ones({C, C}, bool_opts).tril(-1);
    auto A = (bc.unsqueeze(-1) * D * torch::matmul(kc, kc.transpose(-1, -2))).masked_fill(~strict, 0.0);
    auto M = A + torch::eye(C, q.options());
    auto rhs = bc.unsqueeze(-1) * (vc - eG.unsqueeze(-1) * torch::matmul(kc, h));   // [b, H, C, V]
    auto U = torch::linalg_solve_triangular(M, rhs, /*upper=*/false, /*left=*/true, /*unitriangular=*/true);
    // o_t = exp(G_t) S_0^T q_t + sum_{s <= t} D[t, s] (q_t.k_s) u_s.
    auto o = eG.unsqueeze(-1) * torch::matmul(qc, h) + torch::matmul(D * torch::matmul(qc, kc.transpose(-1, -2)), U);
    os.push_back(o.transpose(1, 2));                                                 // [b, C, H, V]
    if (norms) {  // every S_t of the chunk [b, H, C, K, V]
      auto S = torch::einsum("bhts,bhsk,bhsv->bhtkv", {D, kc, U}) + eG.unsqueeze(-1).unsqueeze(-1) * h.unsqueeze(2);
      ns.push_back(S.square().sum({-2, -1}).sqrt().transpose(1, 2));                 // [b, C, H]
      auto prev = torch::cat({h.unsqueeze(2), S.narrow(2, 0, C - 1)}, 2);
      ds.push_back((S - prev).square().sum({1, -2, -1}).sqrt());                     // [b, C]
    }
    // End state: exp(G_last) S_0 + sum_s exp(G_last - G_s) k_s u_s^T.
    auto carry = D.select(2, C - 1);                                                 // [b, H, C(s)]
    h = h * eG.select(-1, C - 1).unsqueeze(-1).unsqueeze(-1) +
        torch::matmul((kc * carry.unsqueeze(-1)).transpose(-1, -2), U);
  }
  DeltaScanOutputs out;
  out.o = torch::cat(os, 1);
  out.final_state = h;
  if (norms) out.norms = torch::cat(ns, 1), out.delta_norms = torch::cat(ds, 1);
  return out;
}

}  // namespace statescope
