// intervention.cpp — the per-layer tensor operations of a training-free intervention.
#include "core/model/intervention.h"

#include <torch/torch.h>

namespace statescope {

torch::Tensor intervene_dt(const LayerIntervention& li, int64_t from, int64_t position, const torch::Tensor& dt) {
  const int64_t L = dt.size(1);
  torch::Tensor out = dt;  // [b, L, C]
  if (li.dt_threshold.defined()) {
    // LongMamba: a token whose dt is not above the channel's threshold neither enters nor decays it
    // (threshold 0 in local channels: every token with dt > 0 kept).
    auto thr = li.dt_threshold.to(dt.device(), dt.scalar_type()).view({1, 1, -1});  // [1, 1, C]
    out = out * (out > thr).to(dt.scalar_type());
  }
  if (li.dt_factor.defined()) {
    auto f = li.dt_factor.to(dt.device(), dt.scalar_type()).view({1, 1, -1});      // [1, 1, C]
    if (position >= from) {
      out = out * f;
    } else if (position + L > from) {  // the factor starts inside this span
      const int64_t k = from - position;
      out = torch::cat({out.narrow(1, 0, k), out.narrow(1, k, L - k) * f}, 1);
    }
  }
  return out;
}

torch::Tensor clip_state(const torch::Tensor& S, const torch::Tensor& max_norm) {
  const int64_t b = S.size(0), G = max_norm.size(0);
  auto flat = S.reshape({b, G, -1});                                              // [b, G, rest]
  auto norm = flat.detach().square().sum(-1).sqrt();                              // [b, G]
  auto cap = max_norm.to(S.device(), S.scalar_type()).view({1, G});
  auto scale = torch::where(norm > cap, cap / norm, torch::ones_like(norm));      // [b, G]
  return (flat * scale.unsqueeze(-1)).view(S.sizes());
}

}  // namespace statescope
