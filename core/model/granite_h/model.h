// granite_h/model.h — Granite 4.0-H in LibTorch (config.h; docs/hybrids-transformers.md section 3):
// model.embed_tokens, model.layers.{i}.{input_layernorm, mamba | self_attn, post_attention_layernorm,
// block_sparse_moe (when num_local_experts > 0), shared_mlp}, model.norm, lm_head (absent when tied).
// A layer, with r = residual_multiplier:
//   h = h + r * mixer(RMSNorm1(h))
//   h = h + r * (moe(x) + shared_mlp(x)), x = RMSNorm2(h)      (shared_mlp(x) alone without experts)
// The embedding is multiplied by embedding_multiplier, the logits divided by logits_scaling; attention
// scores are scaled by attention_multiplier (blocks/attention.h's `scaling`).
//
// Its state between calls (ModelState): each Mamba-2 layer's ssm [b, heads, headdim, d_state] and
// conv [b, conv_dim, conv_kernel-1], and each attention layer's keys and values [b, kv_heads, T,
// head_dim].
#pragma once
#include <variant>
#include <vector>

#include "core/model/blocks/attention.h"
#include "core/model/blocks/hybrid_lm.h"
#include "core/model/blocks/mlp.h"
#include "core/model/blocks/moe.h"
#include "core/model/granite_h/config.h"
#include "core/model/mamba2/model.h"

namespace statescope {

class GraniteHLMImpl : public HybridLMImpl {
 public:
  explicit GraniteHLMImpl(const GraniteHConfig& c);
  std::shared_ptr<RecurrentLMImpl> make_empty() const override { return std::make_shared<GraniteHLMImpl>(cfg); }
  GraniteHConfig cfg;
  Mamba2Config mamba;  // the Mamba-2 layers' config
  std::vector<ParamHolder> input_norms, post_norms;
  std::vector<std::variant<Mamba2Mixer, Attention>> mixers;
  std::vector<Moe> moes;     // per layer; null without experts
  std::vector<Mlp> shared;   // per layer: shared_mlp
  // Recurrent layer r's (its r-th Mamba-2 layer's) scan terms, as Mamba-2's (effective attention).
  SelectiveScanTerms scan_terms(const torch::Tensor& mixer_input, int64_t layer, const LayerState* init) override;

 protected:
  torch::Tensor layer(int64_t i, const torch::Tensor& h, LayerIO& io) override;
  torch::Tensor final_normed(const torch::Tensor& h) const override;
  double embedding_multiplier() const override { return cfg.embedding_multiplier; }
  double logits_multiplier() const override { return 1.0 / cfg.logits_scaling; }
};
TORCH_MODULE(GraniteHLM);

}  // namespace statescope
