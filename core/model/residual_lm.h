// residual_lm.h — the backbone Mamba-1 and Mamba-2 share behind RecurrentLM: an embedding, n_layer
// residual blocks (RMSNorm, then the architecture's mixer, added to the residual stream), a final
// RMSNorm and an output head tied to the embedding or not. Names as the Hugging Face checkpoints:
// backbone.embeddings, backbone.layers.{i}.{norm, mixer}, backbone.norm_f, lm_head.
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
  };
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
  // The initialisation the two share: embeddings (and an untied head) normal(0, 0.02), every norm 1.
  void reset_backbone(at::Generator& gen);
  // In-place draws from `gen` (on the CPU, copied to the tensor's device and dtype).
  static void init_normal(torch::Tensor& t, double std, at::Generator& gen);
  static void init_uniform(torch::Tensor& t, double lo, double hi, at::Generator& gen);
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
};

}  // namespace statescope
