// blocks/hybrid_lm.cpp — the hybrids' shared stack: state threading, statistics, head (hybrid_lm.h).
#include "core/model/blocks/hybrid_lm.h"

#include <torch/torch.h>

#include <cmath>

#include "core/base/error.h"
#include "core/model/dense.h"
#include "core/model/forward_pieces.h"
#include "core/model/intervention.h"

namespace statescope {

namespace {
bool recurrent(LayerKind k) { return k == LayerKind::Mamba2 || k == LayerKind::GatedDeltaNet; }
bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}
}  // namespace

HybridLMImpl::HybridLMImpl(ModelConfig c, const std::string& what, std::vector<LayerKind> kinds)
    : mc_(std::move(c)), kinds_(std::move(kinds)) {
  validate(mc_, what);
  set_layout(statescope::state_layout(mc_));
}

ForwardOutput HybridLMImpl::forward(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt) {
  return forward_in_pieces(
      tokens, init, opt, [this](const torch::Tensor& t, const ModelState* s, const ForwardOptions& o) { return forward_span(t, s, o); },
      attention_only);  // a reset leaves what attention has seen
}

ForwardOutput HybridLMImpl::forward_span(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt) {
  check_tokens(tokens, "forward");
  const int64_t b = tokens.size(0);
  if (init) check_state(*init, b, "forward initial state");
  const int64_t NR = state_layout().n_layer, NA = state_layout().attention_layers;
  const bool from_recurrent = init && !init->empty(), from_caches = init && !init->attention.empty();
  ForwardOutput out;
  out.final_state.resize(NR);
  out.final_state.attention.resize(NA);
  std::vector<torch::Tensor> norms(opt.state_norms ? NR : 0), deltas(norms.size()), decays(opt.log_decay ? NR : 0);
  if (opt.mixer_inputs) out.mixer_inputs.resize(NR);
  const bool probing = opt.attention_stats || opt.attention_scores_of >= 0;
  if (opt.attention_scores_of >= NA)
    throw Error("forward: attention layer " + std::to_string(opt.attention_scores_of) + " of " + std::to_string(NA));
  std::vector<AttentionProbe> probes(probing ? NA : 0);
  if (opt.attention_scores_of >= 0) probes[static_cast<size_t>(opt.attention_scores_of)].keep_qk = true;

  const auto& emb = embed->weight;
  ForwardPrecision precision(mixed_bf16, emb.device());
  auto ids = tokens.to(emb.device(), torch::kInt64);
  auto h = emb.index_select(0, ids.reshape({-1})).view({b, ids.size(1), -1});  // [b, L, d_model]
  if (const double m = embedding_multiplier(); m != 1.0) h = h * m;
  int64_t r = 0, a = 0;
  for (size_t i = 0; i < kinds_.size(); ++i) {
    LayerIO io;
    io.opt = opt;
    if (recurrent(kinds_[i])) {
      io.opt.layer = r;
      io.init = from_recurrent ? &(*init)[r] : nullptr;
      io.final = &out.final_state[r];
      if (opt.state_norms) io.norms = &norms[r];
      if (opt.state_norms && opt.delta_norms) io.deltas = &deltas[r];
      if (opt.log_decay) io.decay = &decays[r];
      if (opt.mixer_inputs) io.mixer_input = &out.mixer_inputs[r];
      ++r;
    } else if (kinds_[i] == LayerKind::Attention) {
      if (from_caches) out.final_state.attention[a] = init->attention[a];
      io.cache = &out.final_state.attention[a];
      io.window = opt.intervention ? opt.intervention->attention_window : 0;
      if (probing) io.probe = &probes[a];
      ++a;
    }
    h = layer(static_cast<int64_t>(i), h, io);
  }
  if (opt.logits_from > 0) h = h.narrow(1, opt.logits_from, h.size(1) - opt.logits_from);  // [b, L - from, d_model]
  out.logits = precision.logits(dense(final_normed(h), output_weight()));                  // [b, L, vocab]
  if (const double m = logits_multiplier(); m != 1.0) out.logits = out.logits * m;
  if (opt.state_norms && NR > 0) {
    out.norm_per_head = torch::stack(norms, 0);                             // [NR, b, L, groups]
    out.norm = out.norm_per_head.square().sum(-1).sqrt();                  // [NR, b, L]
    if (opt.delta_norms) out.delta_norm = torch::stack(deltas, 0);         // [NR, b, L]
  }
  if (opt.log_decay && NR > 0) out.log_decay = torch::stack(decays, 0);    // [NR, b, L, groups]
  if (opt.attention_stats && NA > 0) {
    std::vector<torch::Tensor> ent, first;
    for (auto& p : probes) {
      if (!p.entropy.defined()) throw Error("internal: an attention layer of this hybrid gave no statistics");
      ent.push_back(p.entropy), first.push_back(p.first);
    }
    out.attention_entropy = torch::stack(ent, 0);                           // [NA, b, L, heads]
    out.attention_first = torch::stack(first, 0);                           // [NA, b, L, heads]
  }
  if (opt.attention_scores_of >= 0) {
    const auto& p = probes[static_cast<size_t>(opt.attention_scores_of)];
    out.attention_q = p.q, out.attention_k = p.k, out.attention_scale = p.scale;                  // [b, H, L, d], [b, H, T, d]
    out.attention_window = opt.intervention ? opt.intervention->attention_window : 0;
  }
  return out;
}

std::vector<std::string> HybridLMImpl::no_weight_decay() const {
  std::vector<std::string> out;
  for (const auto& p : named_parameters()) {
    const auto& k = p.key();
    bool hit = k.find("norm") != std::string::npos;
    for (const char* e : {"A_log", ".D", "dt_bias", ".bias", "embeddings.weight", "embed_tokens.weight"}) hit = hit || ends_with(k, e);
    if (hit) out.push_back(k);
  }
  return out;
}

void HybridLMImpl::reset_parameters(uint64_t seed, double a_min, double a_max) {
  if (!(a_min > 0 && a_max >= a_min))
    throw Error("A range [" + std::to_string(a_min) + ", " + std::to_string(a_max) + "] must satisfy 0 < a_min <= a_max");
  torch::NoGradGuard ng;
  auto gen = at::detail::createCPUGenerator(seed);
  auto cpu = [](const torch::Tensor& t) { return torch::TensorOptions().dtype(t.scalar_type()); };
  for (auto& p : named_parameters()) {
    const auto& k = p.key();
    auto& t = p.value();
    torch::Tensor v;
    if (ends_with(k, "A_log")) {
      v = torch::log(torch::empty(t.sizes(), cpu(t)).uniform_(a_min, a_max, gen));
    } else if (ends_with(k, "dt_bias")) {
      auto u = torch::empty(t.sizes(), torch::kFloat64).uniform_(0.0, 1.0, gen);
      auto dt = torch::exp(u * (std::log(1e-1) - std::log(1e-3)) + std::log(1e-3)).clamp_min(1e-4);
      v = dt + torch::log(-torch::expm1(-dt));  // softplus^-1(dt)
    } else if (ends_with(k, ".D")) {
      v = torch::ones(t.sizes(), cpu(t));
    } else if (k.find("norm") != std::string::npos) {
      v = torch::full(t.sizes(), norm_identity(), cpu(t));
    } else if (k.find("conv1d") != std::string::npos && ends_with(k, "weight")) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(t.size(-1)));
      v = torch::empty(t.sizes(), cpu(t)).uniform_(-bound, bound, gen);
    } else if (ends_with(k, "bias")) {
      v = torch::zeros(t.sizes(), cpu(t));
    } else {
      v = at::normal(0.0, 0.02, t.sizes(), gen, cpu(t));
    }
    t.copy_(v);
  }
}

}  // namespace statescope
