// nemotron_h/model.h — Nemotron-H in LibTorch (config.h; docs/hybrids-transformers.md section 2):
// backbone.embeddings, backbone.layers.{i}.{norm, mixer}, backbone.norm_f, lm_head (never tied), each
// mixer the layer's kind: the Mamba-2 mixer (mamba2/model.h, its width mamba_num_heads x
// mamba_head_dim), attention without positional encoding, the relu^2 MLP or the mixture of experts
// (blocks/). A block is h = h + mixer(RMSNorm(h)).
//
// Its state between calls (HybridState): each Mamba-2 layer's ssm [b, heads, headdim, d_state] and
// conv [b, conv_dim, conv_kernel-1], and each attention layer's keys and values [b, kv_heads, T,
// head_dim]. Standalone for now: issue 53's next step puts the hybrid's state into RecurrentLM's
// ModelState and the model into the ModelConfig variant.
#pragma once
#include <variant>
#include <vector>

#include "core/model/blocks/attention.h"
#include "core/model/blocks/hybrid_lm.h"
#include "core/model/blocks/mlp.h"
#include "core/model/blocks/moe.h"
#include "core/model/mamba2/model.h"
#include "core/model/nemotron_h/config.h"

namespace statescope {

class NemotronHLMImpl : public HybridLMImpl {
 public:
  explicit NemotronHLMImpl(const NemotronHConfig& c);
  using HybridLMImpl::forward;
  torch::Tensor forward(const torch::Tensor& tokens, HybridState* state) override;
  NemotronHConfig cfg;
  Mamba2Config mamba;  // the Mamba-2 layers' config
  std::vector<ParamHolder> norms;  // embed: backbone.embeddings, final_norm: backbone.norm_f, lm_head never tied
  std::vector<std::variant<Mamba2Mixer, Attention, Mlp, Moe>> mixers;
};
TORCH_MODULE(NemotronHLM);

}  // namespace statescope
