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
  using HybridLMImpl::forward;
  torch::Tensor forward(const torch::Tensor& tokens, HybridState* state) override;
  Qwen35Config cfg;
  GatedDeltaNetConfig gdn;  // the Gated DeltaNet layers' config
  std::vector<ParamHolder> input_norms, post_norms;  // embed: model.embed_tokens, final_norm: model.norm
  std::vector<std::variant<GatedDeltaNetMixer, Attention>> mixers;
  std::vector<Mlp> mlps;
};
TORCH_MODULE(Qwen35LM);

// A Qwen3.5 checkpoint's tensors under this model's names (see above); `source` names the file in errors.
StateDict qwen3_5_weights(const StateDict& disk, const Qwen35Config& c, const std::string& source);

}  // namespace statescope
