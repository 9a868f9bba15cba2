// nemotron_h/model.cpp — the Nemotron-H stack (model.h).
#include "core/model/nemotron_h/model.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/dense.h"

namespace statescope {

NemotronHLMImpl::NemotronHLMImpl(const NemotronHConfig& c) : cfg(c) {
  c.validate("Nemotron-H config");
  const int64_t H = c.hidden;
  mamba.d_model = H, mamba.d_state = c.d_state, mamba.headdim = c.mamba_head_dim, mamba.ngroups = c.n_groups;
  mamba.d_conv = c.conv_kernel, mamba.chunk_size = c.chunk_size, mamba.d_inner_override = c.mamba_heads * c.mamba_head_dim;
  mamba.conv_bias = c.conv_bias, mamba.proj_bias = c.proj_bias, mamba.norm_eps = c.norm_eps, mamba.norm_per_group = true;
  mamba.dt_limit_lo = c.dt_limit_lo, mamba.dt_limit_hi = c.dt_limit_hi;
  auto backbone = register_module("backbone", std::make_shared<torch::nn::Module>());
  embed = backbone->register_module("embeddings", ParamHolder(std::vector<int64_t>{c.vocab_size, H}, false));
  auto layers = backbone->register_module("layers", std::make_shared<torch::nn::Module>());
  AttentionConfig ac;
  ac.hidden = H, ac.heads = c.heads, ac.kv_heads = c.kv_heads, ac.head_dim = c.head_dim;  // no RoPE, no biases
  MoeConfig mc{MoeConfig::Family::NemotronH, H, c.experts, c.top_k, c.moe_intermediate};
  mc.norm_topk_prob = c.norm_topk_prob, mc.routed_scaling = c.routed_scaling, mc.n_group = c.n_group;
  mc.topk_group = c.topk_group, mc.latent = c.latent, mc.shared_inner = c.shared_intermediate;
  for (size_t i = 0; i < c.layers.size(); ++i) {
    auto layer = layers->register_module(std::to_string(i), std::make_shared<torch::nn::Module>());
    norms.push_back(layer->register_module("norm", ParamHolder(std::vector<int64_t>{H}, false)));
    switch (c.layers[i]) {
      case LayerKind::Mamba2: mixers.emplace_back(layer->register_module("mixer", Mamba2Mixer(mamba))); break;
      case LayerKind::Attention: mixers.emplace_back(layer->register_module("mixer", Attention(ac))); break;
      case LayerKind::Mlp:
        mixers.emplace_back(layer->register_module("mixer", Mlp(MlpConfig{MlpConfig::Kind::Relu2, H, c.intermediate})));
        break;
      case LayerKind::Moe: mixers.emplace_back(layer->register_module("mixer", Moe(mc))); break;
      case LayerKind::GatedDeltaNet: throw Error("Nemotron-H has no Gated DeltaNet layers");
    }
  }
  final_norm = backbone->register_module("norm_f", ParamHolder(std::vector<int64_t>{H}, false));
  lm_head = register_module("lm_head", ParamHolder(std::vector<int64_t>{c.vocab_size, H}, false));
}

torch::Tensor NemotronHLMImpl::forward(const torch::Tensor& tokens, HybridState* state) {
  auto h = embedded(tokens);  // [b, L, H]
  HybridState out;
  const bool from = state && !state->recurrent.empty();
  const bool keys = state && !state->attention.empty();
  size_t r = 0, a = 0;
  for (size_t i = 0; i < mixers.size(); ++i) {
    auto x = rms_norm(h, norms[i]->weight, cfg.norm_eps);
    torch::Tensor y;
    if (auto* m = std::get_if<Mamba2Mixer>(&mixers[i])) {
      LayerState fin;
      ForwardOptions opt;
      opt.layer = static_cast<int64_t>(i);
      y = (*m)->forward(x, from ? &state->recurrent.at(r) : nullptr, opt, fin, nullptr);
      out.recurrent.push_back(std::move(fin));
      ++r;
    } else if (auto* at = std::get_if<Attention>(&mixers[i])) {
      KVCache cache = keys ? state->attention.at(a) : KVCache{};
      y = (*at)->forward(x, &cache);
      out.attention.push_back(std::move(cache));
      ++a;
    } else if (auto* mlp = std::get_if<Mlp>(&mixers[i])) {
      y = (*mlp)->forward(x);
    } else {
      y = std::get<Moe>(mixers[i])->forward(x);
    }
    h = h + y;
  }
  if (state) *state = std::move(out);
  return logits(rms_norm(h, final_norm->weight, cfg.norm_eps));  // [b, L, vocab]
}

}  // namespace statescope
