// nemotron_h/model.cpp — the Nemotron-H stack (model.h).
#include "core/model/nemotron_h/model.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/blocks/mamba2_terms.h"
#include "core/model/dense.h"

namespace statescope {

NemotronHLMImpl::NemotronHLMImpl(const NemotronHConfig& c)
    : HybridLMImpl(c, "Nemotron-H config", c.layers), cfg(c), mamba(mamba_layers(c)) {
  const int64_t H = c.d_model;
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

// A block: h + mixer(RMSNorm(h)).
torch::Tensor NemotronHLMImpl::layer(int64_t i, const torch::Tensor& h, LayerIO& io) {
  auto x = rms_norm(h, norms[i]->weight, cfg.norm_eps);  // [b, L, H]
  if (io.mixer_input) *io.mixer_input = x.detach();
  torch::Tensor y;
  if (auto* m = std::get_if<Mamba2Mixer>(&mixers[i]))
    y = (*m)->forward(x, io.init, io.opt, *io.final, io.norms, io.deltas, io.decay);
  else if (auto* at = std::get_if<Attention>(&mixers[i]))
    y = (*at)->forward(x, io.cache, io.window, io.probe);
  else if (auto* mlp = std::get_if<Mlp>(&mixers[i]))
    y = (*mlp)->forward(x);
  else
    y = std::get<Moe>(mixers[i])->forward(x);
  return h + y;
}

SelectiveScanTerms NemotronHLMImpl::scan_terms(const torch::Tensor& mixer_input, int64_t layer, const LayerState* init) {
  return mamba2_scan_terms(mixers, mamba, mixer_input, layer, init);
}

torch::Tensor NemotronHLMImpl::final_normed(const torch::Tensor& h) const { return rms_norm(h, final_norm->weight, cfg.norm_eps); }

RecurrentLM Arch<NemotronHConfig>::make(const NemotronHConfig& c) {
  NemotronHLM m(c);
  m->reset_parameters(0);
  return m;
}

}  // namespace statescope
