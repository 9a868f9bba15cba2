// blocks/moe.h — the hybrids' mixtures of experts as transformers 5.25 writes them (issue 53), each
// with its own router, in the precision transformers routes in (a top-k choice is discontinuous:
// the same rounding picks the same experts), and its checkpoint's names:
//   NemotronH  sigmoid scores (float32); the score-correction bias only selects; the experts fall into
//              n_group groups scored by their top two, the topk_group best kept; top-k renormalised
//              (norm_topk_prob) and scaled by routed_scaling_factor; relu^2 experts, optionally in a
//              latent space (fc1_latent_proj before, fc2_latent_proj after); plus the shared relu^2
//              expert. Names: gate.weight, gate.e_score_correction_bias, experts.{e}.{up,down}_proj,
//              shared_experts.{up,down}_proj, fc{1,2}_latent_proj.
//   Granite    softmax over the top-k logits (float32); SwiGLU experts stored stacked:
//              router.layer.weight, input_linear.weight [E, 2I, H] ([gate | up]), output_linear.weight
//              [E, H, I]. The shared MLP is the layer's own (blocks/mlp.h), added by the layer.
//   Qwen3Next  softmax (float32), top-k, renormalised (norm_topk_prob); SwiGLU experts
//              experts.{e}.{gate,up,down}_proj; plus the shared SwiGLU expert behind a sigmoid gate
//              (shared_expert, shared_expert_gate).
#pragma once
#include <vector>

#include "core/model/blocks/mlp.h"

namespace statescope {

struct MoeConfig {
  enum class Family { NemotronH, Granite, Qwen3Next };
  Family family = Family::Qwen3Next;
  int64_t hidden = 0, experts = 0, top_k = 0, inner = 0;
  bool norm_topk_prob = true;
  double routed_scaling = 1.0;         // NemotronH
  int64_t n_group = 1, topk_group = 1;  // NemotronH
  int64_t latent = 0;                   // NemotronH's moe_latent_size (0: none)
  int64_t shared_inner = 0;             // the shared expert's width (NemotronH, Qwen3Next)
  void validate(const std::string& source) const;
};

class MoeImpl : public torch::nn::Module {
 public:
  explicit MoeImpl(const MoeConfig& c);
  torch::Tensor forward(const torch::Tensor& x);  // [b, L, hidden] -> [b, L, hidden]
  // Each token's experts [T, top_k] and their weights [T, top_k] (x flattened to [T, hidden]).
  std::pair<torch::Tensor, torch::Tensor> route(const torch::Tensor& x) const;
  MoeConfig cfg;
  ParamHolder gate{nullptr};    // NemotronH, Qwen3Next: [E, H]; Granite: router.layer
  torch::Tensor score_bias;     // NemotronH: gate.e_score_correction_bias [E]
  std::vector<Mlp> experts;     // NemotronH, Qwen3Next
  ParamHolder input_linear{nullptr}, output_linear{nullptr};  // Granite: [E, 2I, H], [E, H, I]
  Mlp shared{nullptr};
  ParamHolder shared_gate{nullptr}, fc1_latent{nullptr}, fc2_latent{nullptr};
};
TORCH_MODULE(Moe);

}  // namespace statescope
