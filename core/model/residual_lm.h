// residual_lm.h — the backbone every architecture shares behind RecurrentLM: an embedding, n_layer
// residual blocks (RMSNorm, then the architecture's mixer, added to the residual stream; fla's models
// then a second RMSNorm and a gated MLP, added likewise), a final RMSNorm and an output head tied to
// the embedding or not. Names as the checkpoints: Mamba's backbone.embeddings,
// backbone.layers.{i}.{norm, mixer}, backbone.norm_f; fla's model.embeddings,
// model.layers.{i}.{attn_norm, attn, mlp_norm, mlp.{gate,up,down}_proj}, model.norm; lm_head.
// An architecture of this shape implements mix() (one layer's mixer) and its initialisation.
#pragma once
#include <functional>
#include <memory>

#include "core/model/recurrent_lm.h"

namespace statescope {

class ResidualLMImpl : public RecurrentLMImpl {
 public:
  // Validates `c` (errors name `what`) and takes its state layout.
  ResidualLMImpl(ModelConfig c, const std::string& what);
  const ModelConfig& model_config() const override { return mc_; }
  using RecurrentLMImpl::forward;
  // With an intervention that resets the state every k tokens, the tokens are cut at the multiples
  // of k (counted from opt.position) and each piece after a cut starts from the zero state.
  ForwardOutput forward(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt) override;
  torch::Tensor output_weight() const override { return lm_head_ ? lm_head_->weight : embeddings_->weight; }

 protected:
  struct Shape {
    int64_t vocab_size = 0, d_model = 0, n_layer = 0;
    bool tie_embeddings = true, residual_in_fp32 = true;
    double norm_eps = 1e-5;
    int64_t mlp_size = 0;  // > 0: each block ends with mlp_norm and a gated MLP of this width (fla)
    // Module names: Mamba's (transformers, mamba_ssm) by default; fla's are model, norm, attn_norm, attn.
    std::string root = "backbone", final_norm = "norm_f", block_norm = "norm", mixer = "mixer";
  };
  // fla's names (model.embeddings, model.layers.{i}.{attn_norm, attn, mlp_norm, mlp}, model.norm).
  static Shape fla_shape(int64_t vocab_size, int64_t d_model, int64_t n_layer, bool tie_embeddings, double norm_eps,
                         int64_t mlp_size) {
    Shape s{vocab_size, d_model, n_layer, tie_embeddings, true, norm_eps, mlp_size};
    s.root = "model", s.final_norm = "norm", s.block_norm = "attn_norm", s.mixer = "attn";
    return s;
  }
  // Registers the modules in the order the checkpoints list them; make_mixer(i) builds layer i's mixer.
  void build(const Shape& s, const std::function<std::shared_ptr<torch::nn::Module>(int64_t)>& make_mixer);
  // build() for an architecture whose config C names the shape's fields alike (d_model, n_layer, ...)
  // and whose mixer holder M is made from C; the mixers go to `mixers` in layer order.
  template <class M, class C>
  void build_layers(const C& c, std::vector<M>& mixers) {
    build({c.vocab_size, c.d_model, c.n_layer, c.tie_embeddings, c.residual_in_fp32, c.norm_eps}, [&](int64_t) {
      mixers.push_back(M(c));
      return mixers.back().ptr();
    });
  }
  // Layer i's mixer: u [b, L, d_model] (normed) -> [b, L, d_model]; writes the layer's final state and,
  // when asked (not null), the per-group state norms [b, L, groups] and delta norms [b, L], and the
  // per-group log decay [b, L, groups] (ForwardOutput::log_decay).
  virtual torch::Tensor mix(int64_t i, const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt,
                            LayerState& final_state, torch::Tensor* norms, torch::Tensor* delta_norms,
                            torch::Tensor* log_decay) = 0;
  // The initialisation every architecture shares: embeddings (and an untied head) normal(0, std),
  // every norm 1; the MLPs' projections normal(0, std) (fla's _init_weights).
  void reset_backbone(at::Generator& gen, double std = 0.02);
  // In-place draws from `gen` (on the CPU, copied to the tensor's device and dtype).
  static void init_normal(torch::Tensor& t, double std, at::Generator& gen);
  static void init_uniform(torch::Tensor& t, double lo, double hi, at::Generator& gen);
  // mamba_ssm's projections and conv: in_proj/out_proj biases (when present) 0, the depthwise conv's
  // weight and bias uniform in +-1/sqrt(d_conv) like PyTorch's default (two draws from `gen`).
  static void init_mamba_conv_and_biases(ParamHolder& in_proj, ParamHolder& out_proj, ParamHolder& conv1d,
                                         int64_t d_conv, at::Generator& gen);
  // The dt bias of mamba_ssm and fla: dt = exp(U[log dt_min, log dt_max]) floored at `floor`, one draw
  // of n; returns softplus^{-1}(dt) = dt + log(-expm1(-dt)), [n] float64.
  static torch::Tensor init_dt_bias(int64_t n, double dt_min, double dt_max, double floor, at::Generator& gen);
  // Names of the parameters that end in one of `endings`, and of every norm's weight: what takes no
  // weight decay.
  std::vector<std::string> norms_and_names_ending(const std::vector<std::string>& endings) const;

  ModelConfig mc_;
 private:
  ForwardOutput forward_span(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt);
 protected:
  Shape shape_;
  ParamHolder embeddings_{nullptr}, norm_f_{nullptr}, lm_head_{nullptr};
  std::vector<ParamHolder> block_norms_;  // backbone.layers.{i}.norm
  struct Mlp {
    ParamHolder norm{nullptr}, gate{nullptr}, up{nullptr}, down{nullptr};  // [D], [M, D], [M, D], [D, M]
  };
  std::vector<Mlp> mlps_;                 // model.layers.{i}.{mlp_norm, mlp}: empty without MLPs
};

}  // namespace statescope
