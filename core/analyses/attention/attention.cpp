// attention.cpp — see attention.h.
#include "core/analyses/attention/attention.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/mamba1/model.h"
#include "core/model/mamba2/model.h"
#include "core/model/intervention.h"

namespace statescope {

namespace {

torch::Tensor causal_mask(int64_t L) { return torch::ones({L, L}, torch::kBool).tril(); }

// Mean |M[t, t-d]| over the t that have such an s, per distance d.  M [L, L] -> [L]
torch::Tensor by_distance(const torch::Tensor& M) {
  const int64_t L = M.size(0);
  auto by = torch::zeros({L}, torch::kFloat64);
  auto absM = M.abs();
  for (int64_t d = 0; d < L; ++d) by[d] = absM.diagonal(-d).mean();
  return by;
}

}  // namespace

torch::Tensor mamba1_channel_attention(const torch::Tensor& dt_c, const torch::Tensor& A_c, const torch::Tensor& B,
                                       const torch::Tensor& C, torch::Tensor* decay_c) {
  const int64_t L = dt_c.size(0), N = A_c.size(0);
  auto cum = torch::cumsum(dt_c, 0);                                               // [L] sum_{r<=t} dt_r
  auto seg = cum.unsqueeze(1) - cum.unsqueeze(0);                                  // [t, s] sum_{s<r<=t}
  const auto causal = causal_mask(L);
  auto M = torch::zeros({L, L}, torch::kFloat64);
  for (int64_t n = 0; n < N; ++n) {  // one state dimension at a time: memory L x L, not L x L x N
    auto decay = torch::exp(seg * A_c[n]).masked_fill(~causal, 0.0);               // above the diagonal: overflow, then 0
    M += C.select(1, n).unsqueeze(1) * B.select(1, n).unsqueeze(0) * decay;
  }
  if (decay_c) *decay_c = torch::exp(cum.unsqueeze(1) * A_c.unsqueeze(0));        // [L, N]
  return M * dt_c.unsqueeze(0);                                                    // column s scaled by dt_s
}

std::vector<EffectiveAttention> effective_attention(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer,
                                                    const std::vector<int64_t>& heads, const ModelState* init,
                                                    const std::function<bool(int64_t, int64_t)>& progress) {
  auto* m2 = dynamic_cast<Mamba2LMImpl*>(model.get());
  auto* m1 = dynamic_cast<Mamba1LMImpl*>(model.get());
  if (!m2 && !m1)
    throw Error("effective attention: written for Mamba-2's heads and Mamba-1's channel groups; this model is " +
                architecture_title(model->model_config()));
  const auto& layout = model->state_layout();
  if (layer < 0 || layer >= layout.n_layer)
    throw Error("effective attention: layer " + std::to_string(layer) + " is outside 0.." +
                std::to_string(layout.n_layer - 1));
  for (int64_t head : heads)
    if (head < 0 || head >= layout.groups)
      throw Error("effective attention: " + layout.group_name + " " + std::to_string(head) + " is outside 0.." +
                  std::to_string(layout.groups - 1));
  if (tokens.dim() != 2 || tokens.size(0) != 1 || tokens.size(1) < 1)
    throw Error("effective attention: needs one sequence of at least one token ([1, L])");
  const int64_t L = tokens.size(1);
  if (L > kMaxAttentionLength)
    throw Error("effective attention: " + std::to_string(L) + " tokens; at most " + std::to_string(kMaxAttentionLength) +
                " (the matrix is L x L)");
  torch::NoGradGuard no_grad;
  ForwardOptions o = model->forward_options();
  o.mixer_inputs = true;
  const auto out = model->forward(tokens, init, o);  // once for every head
  const LayerState* li = init ? &(*init)[layer] : nullptr;
  // A training-free intervention's changed dt and A are the ones the scan reads (from position 0).
  const Intervention* iv = model->intervention.get();
  const LayerIntervention* liv = iv ? iv->layer(layer) : nullptr;
  if (iv && Intervention::clips(iv->layer(layer)))
    throw Error("effective attention: the clip intervention rescales the state by its own norm, which no fixed "
                "matrix M expresses");
  // A reset every k tokens: a position reads only its own piece (and the initial state only in the first).
  auto with_resets = [&](std::vector<EffectiveAttention> rs) {
    const int64_t k = iv ? iv->reset_period : 0;
    if (k <= 0 || k >= L) return rs;
    auto piece = torch::arange(L, torch::kInt64).div(k, "floor");                  // [L]
    auto keep = (piece.unsqueeze(1) == piece.unsqueeze(0)).to(torch::kFloat64);    // [t, s]
    for (auto& r : rs) {
      r.M = r.M * keep;
      r.init = r.init * (piece == 0).to(torch::kFloat64);
      r.by_distance = by_distance(r.M);
    }
    return rs;
  };
  auto intervened = [&](auto in) {
    if (Intervention::changes_inputs(liv)) {
      in.dt = intervene_dt(*liv, iv->dt_from, 0, in.dt);
      in.A = in.A * liv->a_factor;
    }
    return in;
  };
  std::vector<EffectiveAttention> all;
  auto tick = [&](size_t done) {
    if (progress && !progress(static_cast<int64_t>(done), static_cast<int64_t>(heads.size())))
      throw Error("attention cancelled");
  };
  if (m1) {  // a channel group: the mean over its channels
    const Mamba1ScanInputs in = intervened(m1->mixer(layer)->scan_inputs(out.mixer_inputs.at(layer), li));
    const int64_t per = in.x.size(2) / layout.groups;
    auto dt = in.dt.squeeze(0).to(torch::kFloat64);                                // [L, d_inner]
    auto A = in.A.to(torch::kFloat64);                                             // [d_inner, N]
    auto B = in.B.squeeze(0).to(torch::kFloat64), C = in.C.squeeze(0).to(torch::kFloat64);  // [L, N]
    for (int64_t head : heads) {
      tick(all.size());
      EffectiveAttention r{layer, head, L, torch::zeros({L, L}, torch::kFloat64), torch::zeros({L}, torch::kFloat64), {}};
      for (int64_t ch = head * per; ch < (head + 1) * per; ++ch) {
        torch::Tensor decay;
        r.M += mamba1_channel_attention(dt.select(1, ch), A[ch], B, C, &decay) / double(per);
        r.init += decay.mean(1) / double(per);
      }
      r.by_distance = by_distance(r.M);
      all.push_back(std::move(r));
    }
    return with_resets(std::move(all));
  }
  const auto& c = m2->config();
  const Mamba2ScanInputs in = intervened(m2->mixer(layer)->scan_inputs(out.mixer_inputs.at(layer), li));
  const auto causal = causal_mask(L);
  for (int64_t head : heads) {
    tick(all.size());
    const int64_t g = head / (c.nheads() / c.ngroups);
    auto dt = in.dt.select(2, head).squeeze(0).to(torch::kFloat64);                // [L]
    auto B = in.B.select(2, g).squeeze(0).to(torch::kFloat64);                     // [L, N]
    auto C = in.C.select(2, g).squeeze(0).to(torch::kFloat64);                     // [L, N]
    const double A = in.A[head].item<double>();
    auto cum = torch::cumsum(dt * A, 0);                                           // [L] sum_{r<=t} dt_r A
    auto seg = cum.unsqueeze(1) - cum.unsqueeze(0);                                // [t, s] sum_{s<r<=t}
    auto decay = torch::exp(seg.masked_fill(~causal, -std::numeric_limits<double>::infinity()));
    auto M = C.matmul(B.t()) * dt.unsqueeze(0) * decay;                            // [L, L]
    all.push_back({layer, head, L, M, torch::exp(cum), by_distance(M)});
  }
  return with_resets(std::move(all));
}

EffectiveAttention effective_attention(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer, int64_t head,
                                       const ModelState* init) {
  return effective_attention(model, tokens, layer, std::vector<int64_t>{head}, init).front();
}

std::vector<int32_t> leading_tokens(const std::vector<Document>& docs, int64_t length) {
  std::vector<int32_t> ids;
  for (const auto& d : docs)
    for (int32_t t : d.tokens) {
      if (static_cast<int64_t>(ids.size()) >= length) return ids;
      ids.push_back(t);
    }
  return ids;
}

AttentionResult attention_result(RecurrentLM& model, const std::vector<int32_t>& tokens, int64_t layer, int64_t head,
                                 const std::function<bool(int64_t, int64_t)>& progress) {
  if (tokens.empty()) throw Error("attention: the sequence is empty");
  AttentionResult r;
  r.layer = layer;
  r.tokens = tokens;
  r.length = static_cast<int64_t>(tokens.size());
  if (head >= 0) r.heads.push_back(head);
  else
    for (int64_t h = 0; h < model->state_layout().groups; ++h) r.heads.push_back(h);
  const auto ids = torch::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()), torch::kInt64).view({1, r.length});
  for (const auto& a : effective_attention(model, ids, layer, r.heads, nullptr, progress)) {
    using Copy = std::pair<std::vector<double>*, const torch::Tensor*>;
    for (auto [dst, src] : {Copy{&r.M, &a.M}, Copy{&r.init, &a.init}, Copy{&r.by_distance, &a.by_distance}}) {
      auto c = src->contiguous();
      dst->insert(dst->end(), c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
    }
  }
  return r;
}

}  // namespace statescope
