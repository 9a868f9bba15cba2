// granite_h/model.cpp — the Granite 4.0-H stack (model.h).
#include "core/model/granite_h/model.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/blocks/mamba2_terms.h"
#include "core/model/dense.h"

namespace statescope {

GraniteHLMImpl::GraniteHLMImpl(const GraniteHConfig& c)
    : HybridLMImpl(c, "Granite 4.0-H config", c.layers), cfg(c), mamba(mamba_layers(c)) {
  const int64_t H = c.d_model;
  using Shape = std::vector<int64_t>;
  AttentionConfig ac;
  ac.hidden = H, ac.heads = c.heads, ac.kv_heads = c.kv_heads, ac.head_dim = c.head_dim(), ac.bias = c.attention_bias;
  ac.rope_theta = c.rope_theta, ac.scaling = c.attention_multiplier;
  MoeConfig mc{MoeConfig::Family::Granite, H, c.experts, c.top_k, c.intermediate};
  auto model = register_module("model", std::make_shared<torch::nn::Module>());
  embed = model->register_module("embed_tokens", ParamHolder(Shape{c.vocab_size, H}, false));
  auto layers = model->register_module("layers", std::make_shared<torch::nn::Module>());
  for (size_t i = 0; i < c.layers.size(); ++i) {
    auto layer = layers->register_module(std::to_string(i), std::make_shared<torch::nn::Module>());
    input_norms.push_back(layer->register_module("input_layernorm", ParamHolder(Shape{H}, false)));
    if (c.layers[i] == LayerKind::Mamba2)
      mixers.emplace_back(layer->register_module("mamba", Mamba2Mixer(mamba)));
    else
      mixers.emplace_back(layer->register_module("self_attn", Attention(ac)));
    post_norms.push_back(layer->register_module("post_attention_layernorm", ParamHolder(Shape{H}, false)));
    moes.push_back(c.experts > 0 ? layer->register_module("block_sparse_moe", Moe(mc)) : Moe(nullptr));
    shared.push_back(layer->register_module("shared_mlp", Mlp(MlpConfig{MlpConfig::Kind::FusedSwiGLU, H, c.shared_intermediate})));
  }
  final_norm = model->register_module("norm", ParamHolder(Shape{H}, false));
  if (!c.tie_embeddings) lm_head = register_module("lm_head", ParamHolder(Shape{c.vocab_size, H}, false));
}

// A layer: h + r * mixer(RMSNorm1(h)), then h + r * (experts + shared MLP)(RMSNorm2(h)).
torch::Tensor GraniteHLMImpl::layer(int64_t i, const torch::Tensor& h0, LayerIO& io) {
  const double r = cfg.residual_multiplier;
  auto x = rms_norm(h0, input_norms[i]->weight, cfg.norm_eps);  // [b, L, H]
  if (io.mixer_input) *io.mixer_input = x.detach();
  torch::Tensor y;
  if (auto* m = std::get_if<Mamba2Mixer>(&mixers[i]))
    y = (*m)->forward(x, io.init, io.opt, *io.final, io.norms, io.deltas, io.decay);
  else
    y = std::get<Attention>(mixers[i])->forward(x, io.cache, io.window, io.probe);
  auto h = h0 + y * r;
  auto z = rms_norm(h, post_norms[i]->weight, cfg.norm_eps);
  auto f = shared[i]->forward(z);
  if (moes[i]) f = moes[i]->forward(z) + f;
  return h + f * r;
}

SelectiveScanTerms GraniteHLMImpl::scan_terms(const torch::Tensor& mixer_input, int64_t layer, const LayerState* init) {
  return mamba2_scan_terms(mixers, mamba, mixer_input, layer, init);
}

torch::Tensor GraniteHLMImpl::final_normed(const torch::Tensor& h) const { return rms_norm(h, final_norm->weight, cfg.norm_eps); }

RecurrentLM Arch<GraniteHConfig>::make(const GraniteHConfig& c) {
  GraniteHLM m(c);
  m->reset_parameters(0);
  return m;
}

}  // namespace statescope
