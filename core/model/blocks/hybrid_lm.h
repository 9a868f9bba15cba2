// blocks/hybrid_lm.h — what every hybrid family's model shares behind RecurrentLM (issue 53): an
// embedding, a stack of layers of several kinds (blocks/kinds.h), a final norm and an output head (tied
// to the embedding where the family's checkpoint has no lm_head). Each family registers these under
// its checkpoint's names and defines one layer's step (nemotron_h/, qwen3_5/).
//
// The state (ModelState): one LayerState per recurrent layer (Mamba-2 or Gated DeltaNet, in layer
// order; the state layout's n_layer counts these alone) and one key/value cache per attention layer.
// The per-token statistics (state norms, log decay, mixer inputs) are the recurrent layers', stacked
// in the same order. An intervention's reset period resets the recurrent layers' states at its
// multiples and leaves the attention caches as they are: the ablation "recurrent state reset every T,
// attention untouched"; its attention_window restricts every attention layer to the last positions and
// leaves the recurrent layers as they are: "attention restricted to a window of T".
#pragma once
#include <vector>

#include "core/model/blocks/attention.h"
#include "core/model/blocks/kinds.h"
#include "core/model/recurrent_lm.h"

namespace statescope {

class HybridLMImpl : public RecurrentLMImpl {
 public:
  const ModelConfig& model_config() const override { return mc_; }
  using RecurrentLMImpl::forward;
  ForwardOutput forward(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt) override;
  torch::Tensor output_weight() const override { return lm_head ? lm_head->weight : embed->weight; }
  // Every norm's weight, A_log, D, dt_bias and every bias (the recurrent layers' reference trainers'
  // exemptions, and attention's norms and biases alike).
  std::vector<std::string> no_weight_decay() const override;
  // A plain initialisation for a fresh hybrid (tiny models trained by statescope): embeddings, head,
  // projections and experts normal(0, 0.02), biases 0, norms their identity, convs uniform in
  // +-1/sqrt(kernel), per recurrent head A = U(a_min, a_max) (A_log = log A), dt log-uniform in
  // [1e-3, 1e-1] (dt_bias its inverse softplus), D = 1. Loaded checkpoints overwrite all of it.
  void reset_parameters(uint64_t seed, double a_min = 1.0, double a_max = 16.0) override;

  ParamHolder embed{nullptr}, final_norm{nullptr}, lm_head{nullptr};  // lm_head null: tied to embed

 protected:
  // `c` validated (errors name `what`); its layout taken; `kinds`: every layer's kind in order.
  HybridLMImpl(ModelConfig c, const std::string& what, std::vector<LayerKind> kinds);

  // What layer i reads and writes besides the residual stream.
  struct LayerIO {
    const LayerState* init = nullptr;  // a recurrent layer's initial state (null: zeros)
    LayerState* final = nullptr;       // a recurrent layer's final state
    KVCache* cache = nullptr;          // an attention layer's cache (appended to)
    int64_t window = 0;                // an attention layer's window (> 0: the intervention's attention_window)
    AttentionProbe* probe = nullptr;   // an attention layer's statistics, when asked (attention.h)
    torch::Tensor* norms = nullptr;    // recurrent, when asked: per-group state norms [b, L, groups]
    torch::Tensor* deltas = nullptr;   // recurrent, when asked: ||S_t - S_{t-1}|| [b, L]
    torch::Tensor* decay = nullptr;    // recurrent, when asked: log decay [b, L, groups]
    torch::Tensor* mixer_input = nullptr;  // recurrent, when asked: the normed input [b, L, d_model]
    ForwardOptions opt;                // opt.layer: the recurrent layer's index
  };
  // h [b, L, d_model] -> h after layer i (every residual add of the layer included).
  virtual torch::Tensor layer(int64_t i, const torch::Tensor& h, LayerIO& io) = 0;
  // The final norm of h [b, L, d_model].
  virtual torch::Tensor final_normed(const torch::Tensor& h) const = 0;
  // A family's scale of the embedding (Granite's embedding_multiplier) and of the logits (Granite's
  // 1 / logits_scaling); 1: none.
  virtual double embedding_multiplier() const { return 1.0; }
  virtual double logits_multiplier() const { return 1.0; }
  // The value of a norm weight that leaves its input as it is (1; 0 for zero-centred norms).
  virtual double norm_identity() const { return 1.0; }

  ModelConfig mc_;

 private:
  ForwardOutput forward_span(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt);
  std::vector<LayerKind> kinds_;
};

}  // namespace statescope
