// ssd_scan.cpp — sequential reference and chunked SSD (Mamba-2 paper, "SSD minimal", with the
// inter-chunk recurrence as a linear scan so cost stays linear in the number of chunks).
#include "core/model/mamba2/ssd_scan.h"
#include "core/model/intervention.h"

#include <torch/torch.h>

#include <sstream>

#include "core/base/error.h"
#include "core/model/tensor_text.h"

namespace statescope {
namespace {

using torch::indexing::Slice;


// [b, L, G, N] -> [b, L, H, N]: each head reads its group's B or C.
torch::Tensor expand_groups(const torch::Tensor& t, int64_t nheads) {
  const int64_t G = t.size(2);
  return G == nheads ? t : t.repeat_interleave(nheads / G, /*dim=*/2);
}

// x [..., T] -> [..., T, T] with out[i][j] = sum_{k=j+1..i} x_k for i >= j and -inf above the
// diagonal. Built by a masked cumulative sum, never as cumsum_i - cumsum_j (which cancels in
// float32). No inf ever enters the cumsum, so exp() and its backward stay finite.
torch::Tensor segsum(const torch::Tensor& x) {
  const int64_t T = x.size(-1);
  auto opts = torch::TensorOptions().dtype(torch::kBool).device(x.device());
  auto strict_lower = torch::tril(torch::ones({T, T}, opts), -1);
  auto lower = torch::tril(torch::ones({T, T}, opts), 0);
  auto sizes = x.sizes().vec();
  sizes.push_back(T);
  auto xx = x.unsqueeze(-1).expand(sizes);  // [..., T(i), T(j)] = x_i
  xx = xx.masked_fill(strict_lower.logical_not(), 0);
  auto s = torch::cumsum(xx, -2);
  return s.masked_fill(lower.logical_not(), -std::numeric_limits<double>::infinity());
}

}  // namespace

void check_scan_shapes(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                       const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& h0) {
  auto fail = [&](const std::string& what) { throw Error("ssd_scan: " + what); };
  if (x.dim() != 4) fail("x must be [b, L, H, P], got " + shape_str(x));
  const int64_t b = x.size(0), L = x.size(1), H = x.size(2), P = x.size(3);
  if (dt.dim() != 3 || dt.size(0) != b || dt.size(1) != L || dt.size(2) != H)
    fail("dt must be [b, L, H] = [" + std::to_string(b) + ", " + std::to_string(L) + ", " +
         std::to_string(H) + "], got " + shape_str(dt));
  if (A.dim() != 1 || A.size(0) != H) fail("A must be [H], got " + shape_str(A));
  if (B.dim() != 4 || B.size(0) != b || B.size(1) != L) fail("B must be [b, L, G, N], got " + shape_str(B));
  if (!C.sizes().equals(B.sizes())) fail("C must have B's shape " + shape_str(B) + ", got " + shape_str(C));
  if (H % B.size(2) != 0) fail("heads (" + std::to_string(H) + ") not a multiple of groups");
  if (h0.defined() && (h0.dim() != 4 || h0.size(0) != b || h0.size(1) != H || h0.size(2) != P ||
                       h0.size(3) != B.size(3)))
    fail("initial state must be [b, H, P, N], got " + shape_str(h0));
}

ScanResult ssd_scan_sequential(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                               const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& h0,
                               bool want_norms, const torch::Tensor& max_norm) {
  check_scan_shapes(x, dt, A, B, C, h0);
  const int64_t b = x.size(0), L = x.size(1), H = x.size(2), P = x.size(3), N = B.size(3);
  if (max_norm.defined() && (max_norm.dim() != 1 || max_norm.size(0) != H))
    throw Error("ssd_scan: max_norm must be [nheads = " + std::to_string(H) + "]");
  auto Bh = expand_groups(B, H), Ch = expand_groups(C, H);  // [b, L, H, N]
  auto decay = torch::exp(dt * A);                            // [b, L, H]
  auto S = h0.defined() ? h0 : torch::zeros({b, H, P, N}, x.options());
  std::vector<torch::Tensor> ys, norms, deltas;
  ys.reserve(L);
  for (int64_t t = 0; t < L; ++t) {
    auto xt = x.select(1, t) * dt.select(1, t).unsqueeze(-1);                     // [b, H, P]
    auto prev = S;
    S = decay.select(1, t).unsqueeze(-1).unsqueeze(-1) * S +
        xt.unsqueeze(-1) * Bh.select(1, t).unsqueeze(-2);                         // [b, H, P, N]
    if (max_norm.defined()) S = clip_state(S, max_norm);                          // a head's norm <= its bound
    ys.push_back(torch::matmul(S, Ch.select(1, t).unsqueeze(-1)).squeeze(-1));   // [b, H, P]
    if (want_norms) {
      torch::NoGradGuard ng;
      norms.push_back(S.detach().square().sum({-2, -1}).sqrt());                  // [b, H]
      deltas.push_back((S.detach() - prev.detach()).square().sum({-2, -1}).sqrt());
    }
  }
  ScanResult r;
  r.y = L ? torch::stack(ys, 1) : torch::zeros({b, 0, H, P}, x.options());
  r.final_state = S;
  if (want_norms) {
    r.state_norm = L ? torch::stack(norms, 1) : torch::zeros({b, 0, H}, x.options());
    r.delta_norm = L ? torch::stack(deltas, 1) : torch::zeros({b, 0, H}, x.options());
  }
  return r;
}

// One algorithm (the SSD minimal form) read top to bottom with a shape on every line: pad, intra-chunk
// outputs, chunk states, inter-chunk recurrence, state outputs, norms. Longer than ~80 lines on
// purpose; split, its data flow would no longer be visible in one place.
ScanResult ssd_scan_chunked(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                            const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& h0,
                            int64_t chunk, bool want_norms) {
  check_scan_shapes(x, dt, A, B, C, h0);
  if (chunk <= 0) throw Error("ssd_scan: chunk size must be positive, got " + std::to_string(chunk));
  const int64_t b = x.size(0), L = x.size(1), H = x.size(2), P = x.size(3), N = B.size(3);
  if (L == 0) return ssd_scan_sequential(x, dt, A, B, C, h0, want_norms);  // nothing to chunk
  const int64_t Q = std::min(chunk, L);  // a sequence shorter than a chunk is one chunk, unpadded
  const int64_t pad = (Q - L % Q) % Q, Lp = L + pad, nc = Lp / Q;

  // Discretise, then pad the discretised tensors with zeros: a padded step has decay exp(0) = 1
  // and no input, so the final state is exactly the state after token L-1.
  auto Xd = x * dt.unsqueeze(-1);  // [b, L, H, P]
  auto Ad = dt * A;                // [b, L, H]
  auto Bh = expand_groups(B, H), Ch = expand_groups(C, H);  // [b, L, H, N]
  if (pad) {
    namespace F = torch::nn::functional;
    Xd = F::pad(Xd, F::PadFuncOptions({0, 0, 0, 0, 0, pad}));
    Bh = F::pad(Bh, F::PadFuncOptions({0, 0, 0, 0, 0, pad}));
    Ch = F::pad(Ch, F::PadFuncOptions({0, 0, 0, 0, 0, pad}));
    Ad = F::pad(Ad, F::PadFuncOptions({0, 0, 0, pad}));
  }
  auto Xc = Xd.view({b, nc, Q, H, P});
  auto Bc = Bh.reshape({b, nc, Q, H, N});
  auto Cc = Ch.reshape({b, nc, Q, H, N});
  auto Ac = Ad.view({b, nc, Q, H}).permute({0, 3, 1, 2});  // [b, H, nc, Q]
  auto A_cs = torch::cumsum(Ac, -1);                        // [b, H, nc, Q] decay from chunk start

  // 1. Within each chunk: y_l = sum_{s<=l} (C_l . B_s) exp(segsum)[l, s] X_s.
  auto Lmat = torch::exp(segsum(Ac));                                          // [b, H, nc, Q(l), Q(s)]
  auto CB = torch::einsum("bclhn,bcshn->bchls", {Cc, Bc});                     // [b, nc, H, Q, Q]
  auto W = CB * Lmat.permute({0, 2, 1, 3, 4});                                 // [b, nc, H, Q, Q]
  auto Y_diag = torch::matmul(W, Xc.permute({0, 1, 3, 2, 4}));                 // [b, nc, H, Q, P]

  // 2. Each chunk's own contribution to its end state. Decay from s to the chunk end is the sum of
  // Ad over (s, Q-1], taken as a shifted reverse cumsum (no cancellation).
  auto rev = torch::flip(torch::cumsum(torch::flip(Ac, {-1}), -1), {-1});       // sum over [s, Q-1]
  namespace F = torch::nn::functional;
  auto to_end = F::pad(rev, F::PadFuncOptions({0, 1})).narrow(-1, 1, Q);       // sum over (s, Q-1]
  auto decay_states = torch::exp(to_end);                                      // [b, H, nc, Q]
  auto Xw = Xc * decay_states.permute({0, 2, 3, 1}).unsqueeze(-1);             // [b, nc, Q, H, P]
  auto states = torch::einsum("bcshp,bcshn->bchpn", {Xw, Bc});                 // [b, nc, H, P, N]

  // 3. Inter-chunk recurrence, a linear scan starting from the initial state.
  auto chunk_decay = torch::exp(A_cs.select(-1, Q - 1));                       // [b, H, nc]
  auto S = h0.defined() ? h0 : torch::zeros({b, H, P, N}, x.options());
  std::vector<torch::Tensor> starts;
  starts.reserve(nc);
  for (int64_t c = 0; c < nc; ++c) {
    starts.push_back(S);
    S = chunk_decay.select(-1, c).unsqueeze(-1).unsqueeze(-1) * S + states.select(1, c);
  }
  auto S_in = torch::stack(starts, 1);                                         // [b, nc, H, P, N]

  // 4. Contribution of each chunk's start state to its outputs.
  auto decay_out = torch::exp(A_cs).permute({0, 2, 1, 3}).unsqueeze(-1);      // [b, nc, H, Q, 1]
  auto Y_off = torch::matmul(Cc.permute({0, 1, 3, 2, 4}), S_in.transpose(-1, -2)) * decay_out;  // [b, nc, H, Q, P]

  ScanResult r;
  r.y = (Y_diag + Y_off).permute({0, 1, 3, 2, 4}).reshape({b, Lp, H, P}).narrow(1, 0, L);
  r.final_state = S;

  if (want_norms) {
    // S_t = exp(A_cs[t]) S_in + sum_{s<=t} Lmat[t, s] X_s B_s^T, materialised a block at a time.
    torch::NoGradGuard ng;
    const int64_t blk = std::max<int64_t>(1, std::min<int64_t>(Q, 32));
    auto norms = torch::empty({b, Lp, H}, x.options()), deltas = torch::empty({b, Lp, H}, x.options());
    auto Ld = Lmat.detach(), Xcd = Xc.detach(), Bcd = Bc.detach(), Sd = S_in.detach();
    auto Ecs = torch::exp(A_cs.detach());                                      // [b, H, nc, Q]
    for (int64_t c = 0; c < nc; ++c) {
      auto prev = Sd.select(1, c);                                             // [b, H, P, N] state before the chunk
      for (int64_t t0 = 0; t0 < Q; t0 += blk) {
        const int64_t n = std::min(blk, Q - t0);
        auto Lb = Ld.select(2, c).narrow(2, t0, n);                            // [b, H, n, Q]
        auto part = torch::einsum("bhts,bshp,bshn->bthpn", {Lb, Xcd.select(1, c), Bcd.select(1, c)});
        auto carry = Ecs.select(2, c).narrow(2, t0, n).permute({0, 2, 1}).unsqueeze(-1).unsqueeze(-1) *
                     Sd.select(1, c).unsqueeze(1);                             // [b, n, H, P, N]
        auto St = part + carry;                                                // [b, n, H, P, N]
        norms.narrow(1, c * Q + t0, n).copy_(St.square().sum({-2, -1}).sqrt());
        auto before = torch::cat({prev.unsqueeze(1), St.narrow(1, 0, n - 1)}, 1);
        deltas.narrow(1, c * Q + t0, n).copy_((St - before).square().sum({-2, -1}).sqrt());
        prev = St.select(1, n - 1);
      }
    }
    r.state_norm = norms.narrow(1, 0, L);
    r.delta_norm = deltas.narrow(1, 0, L);
  }
  return r;
}

}  // namespace statescope
