// nemotron_h/model.h — Nemotron-H in LibTorch (config.h; docs/hybrids-transformers.md section 2):
// backbone.embeddings, backbone.layers.{i}.{norm, mixer}, backbone.norm_f, lm_head (never tied), each
// mixer the layer's kind: the Mamba-2 mixer (mamba2/model.h, its width mamba_num_heads x
// mamba_head_dim), attention without positional encoding, the relu^2 MLP or the mixture of experts
// (blocks/). A block is h = h + mixer(RMSNorm(h)).
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
#include "core/model/mamba2/model.h"
#include "core/model/nemotron_h/config.h"

namespace statescope {

class NemotronHLMImpl : public HybridLMImpl {
 public:
  explicit NemotronHLMImpl(const NemotronHConfig& c);
  std::shared_ptr<RecurrentLMImpl> make_empty() const override { return std::make_shared<NemotronHLMImpl>(cfg); }
  NemotronHConfig cfg;
  Mamba2Config mamba;  // the Mamba-2 layers' config
  std::vector<ParamHolder> norms;  // embed: backbone.embeddings, final_norm: backbone.norm_f, lm_head never tied
  std::vector<std::variant<Mamba2Mixer, Attention, Mlp, Moe>> mixers;
  // Recurrent layer r's (its r-th Mamba-2 layer's) scan terms, as Mamba-2's (effective attention).
  SelectiveScanTerms scan_terms(const torch::Tensor& mixer_input, int64_t layer, const LayerState* init) override;

 protected:
  torch::Tensor layer(int64_t i, const torch::Tensor& h, LayerIO& io) override;
  torch::Tensor final_normed(const torch::Tensor& h) const override;
};
TORCH_MODULE(NemotronHLM);

}  // namespace statescope
