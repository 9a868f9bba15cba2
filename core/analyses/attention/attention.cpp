// attention.cpp — see attention.h.
#include "core/analyses/attention/attention.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/mamba2/model.h"

namespace statescope {

EffectiveAttention effective_attention(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer, int64_t head,
                                       const ModelState* init) {
  auto* m2 = dynamic_cast<Mamba2LMImpl*>(model.get());
  if (!m2)
    throw Error("effective attention: written for Mamba-2's heads; this model is " +
                architecture_title(model->model_config()));
  const auto& c = m2->config();
  if (layer < 0 || layer >= c.n_layer)
    throw Error("effective attention: layer " + std::to_string(layer) + " is outside 0.." + std::to_string(c.n_layer - 1));
  if (head < 0 || head >= c.nheads())
    throw Error("effective attention: head " + std::to_string(head) + " is outside 0.." + std::to_string(c.nheads() - 1));
  if (tokens.dim() != 2 || tokens.size(0) != 1 || tokens.size(1) < 1)
    throw Error("effective attention: needs one sequence of at least one token ([1, L])");
  const int64_t L = tokens.size(1);
  if (L > kMaxAttentionLength)
    throw Error("effective attention: " + std::to_string(L) + " tokens; at most " + std::to_string(kMaxAttentionLength) +
                " (the matrix is L x L)");
  torch::NoGradGuard no_grad;
  ForwardOptions o = model->forward_options();
  o.mixer_inputs = true;
  const auto out = model->forward(tokens, init, o);
  const LayerState* li = init ? &(*init)[layer] : nullptr;
  const Mamba2ScanInputs in = m2->mixer(layer)->scan_inputs(out.mixer_inputs.at(layer), li);
  const int64_t g = head / (c.nheads() / c.ngroups);
  auto dt = in.dt.select(2, head).squeeze(0).to(torch::kFloat64);                  // [L]
  auto B = in.B.select(2, g).squeeze(0).to(torch::kFloat64);                       // [L, N]
  auto C = in.C.select(2, g).squeeze(0).to(torch::kFloat64);                       // [L, N]
  const double A = in.A[head].item<double>();
  auto cum = torch::cumsum(dt * A, 0);                                             // [L] sum_{r<=t} dt_r A
  auto seg = cum.unsqueeze(1) - cum.unsqueeze(0);                                  // [t, s] sum_{s<r<=t}
  auto causal = torch::ones({L, L}, torch::kBool).tril();
  auto decay = torch::exp(seg.masked_fill(~causal, -std::numeric_limits<double>::infinity()));
  EffectiveAttention r;
  r.layer = layer, r.head = head, r.length = L;
  r.M = C.matmul(B.t()) * dt.unsqueeze(0) * decay;                                // [L, L]
  r.init = torch::exp(cum);                                                        // [L]
  // Mean |M[t, t-d]| over the t that have such an s, per distance d.
  auto by = torch::zeros({L}, torch::kFloat64);
  auto absM = r.M.abs();
  for (int64_t d = 0; d < L; ++d) by[d] = absM.diagonal(-d).mean();
  r.by_distance = by;
  return r;
}

}  // namespace statescope
