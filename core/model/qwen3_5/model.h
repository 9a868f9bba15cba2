// qwen3_5/model.h — Qwen3.5's text model in LibTorch (config.h; docs/hybrids-transformers.md section
// 5): model.embed_tokens, model.layers.{i}.{input_layernorm, linear_attn | self_attn,
// post_attention_layernorm, mlp}, model.norm, lm_head (absent when tied). A layer is
// h = h + mixer(RMSNorm1(h)); h = h + MLP(RMSNorm2(h)), the norms zero-centred (weight 1 + w).
//
// Its Gated DeltaNet layer is statescope's (gdn/model.h: fla's maths, which transformers' Qwen3.5
// layer computes too) under fla's names: qwen3_5_weights() renames a checkpoint's fused in_proj_qkv,
// conv1d, in_proj_z/a/b, norm and out_proj into them (and drops the multimodal prefix and vision
// tower). Its attention is blocks/attention.h with q/k norms, the output gate and partial RoPE.
#pragma once
#include <variant>
#include <vector>

#include "core/model/blocks/attention.h"
#include "core/model/blocks/hybrid_lm.h"
#include "core/model/blocks/mlp.h"
#include "core/model/checkpoint.h"
#include "core/model/gdn/model.h"
#include "core/model/qwen3_5/config.h"

namespace statescope {

class Qwen35LMImpl : public HybridLMImpl {
 public:
  explicit Qwen35LMImpl(const Qwen35Config& c);
  std::shared_ptr<RecurrentLMImpl> make_empty() const override { return std::make_shared<Qwen35LMImpl>(cfg); }
  // The checkpoint's fused Gated DeltaNet tensors renamed into this model's (qwen3_5_weights), and back.
  StateDict from_checkpoint(StateDict sd, const std::string& source) const override;
  StateDict to_checkpoint(StateDict sd) const override;
  Qwen35Config cfg;
  GatedDeltaNetConfig gdn;  // the Gated DeltaNet layers' config
  std::vector<ParamHolder> input_norms, post_norms;  // embed: model.embed_tokens, final_norm: model.norm
  std::vector<std::variant<GatedDeltaNetMixer, Attention>> mixers;
  std::vector<Mlp> mlps;

 protected:
  torch::Tensor layer(int64_t i, const torch::Tensor& h, LayerIO& io) override;
  torch::Tensor final_normed(const torch::Tensor& h) const override;
  double norm_identity() const override { return 0.0; }  // zero-centred: weight 1 + w
};
TORCH_MODULE(Qwen35LM);

// A Qwen3.5 checkpoint's tensors under this model's names (see above); `source` names the file in errors.
// Tensors already under this model's names pass as they are.
StateDict qwen3_5_weights(const StateDict& disk, const Qwen35Config& c, const std::string& source);
// This model's tensors under a text-only Qwen3.5 checkpoint's names (what transformers' Qwen3_5ForCausalLM reads).
StateDict qwen3_5_checkpoint(const StateDict& mine);

}  // namespace statescope
