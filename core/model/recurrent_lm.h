// recurrent_lm.h — the recurrent language model as the rest of statescope sees it: forward from any
// initial state to logits, the final state and per-position state statistics; the zero state; the
// state layout (state_layout.h) every policy, analysis and view takes its sizes from; the parameters
// that take no weight decay, said by the architecture; the device; its capabilities. Mamba-2
// (mamba2/model.h), Mamba-1 (mamba1/model.h), GLA (gla/model.h) and Gated DeltaNet (gdn/model.h)
// implement it; make_model (model_factory.h) builds one from a ModelConfig.
//
// Module and parameter names are the Hugging Face checkpoint keys (backbone.embeddings.weight,
// backbone.layers.{i}.mixer...), so a state dict maps one to one. Only core/ and app/ (outside
// Qt-visible headers) include this file.
#pragma once
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model_config.h"
#include "core/model/state_layout.h"

namespace statescope {

struct Intervention;  // intervention.h

// A checkpoint's tensors by name (checkpoint.h reads and writes them).
using StateDict = std::map<std::string, torch::Tensor>;

// State of one recurrent layer between tokens, shaped by the model's StateLayout.
struct LayerState {
  torch::Tensor ssm;   // [b, layout.ssm...], at least float32
  torch::Tensor conv;  // [b, layout.conv...]: the last d_conv-1 pre-conv inputs, oldest first
};

// An attention layer's state between calls (hybrids): the keys and values of every position so far,
// as transformers caches them (keys after their norm, multiplier and rotary embedding).
struct KVCache {
  torch::Tensor keys, values;  // [b, kv_heads, T, head_dim]; undefined: empty
  int64_t length() const { return keys.defined() ? keys.size(2) : 0; }
};

// A model's state between calls: one LayerState per recurrent layer (the layout's n_layer, in layer
// order; empty: zeros) and, in a hybrid, one key/value cache per attention layer (empty: no keys yet).
// The policies, norms and analyses act on the recurrent layers; a pure recurrent model has no caches.
struct ModelState : std::vector<LayerState> {
  using std::vector<LayerState>::vector;
  std::vector<KVCache> attention;
};

// Tensors detached from autograd (the attention caches too).

ModelState detach_state(const ModelState& s);
// The attention caches of `s` alone (its recurrent layers empty: zeros): what a piece that resets the
// recurrent state but keeps what attention has seen starts from.
ModelState attention_only(const ModelState& s);

// Sequential: the reference recurrence. Chunked: the architecture's parallel scan in ATen (any device,
// autograd; Mamba-1 has none and runs the recurrence). Fused: the fast path: CUDA kernels on a GPU
// where the architecture has them, plain CPU loops on the CPU; anywhere else it falls back to Chunked.
enum class ScanImpl { Sequential, Chunked, Fused };

struct ForwardOptions {
  ScanImpl scan = ScanImpl::Chunked;
  int64_t chunk_size = 0;     // 0: the config's chunk_size (Mamba-2)
  bool state_norms = false;   // also return per-token SSM state norms
  bool delta_norms = true;    // with state_norms: also ||S_t - S_{t-1}|| (ForwardOutput::delta_norm)
  bool log_decay = false;     // also return the per-token log decay dt_t * A per group (ForwardOutput)
  bool cpu_twins = false;     // Fused on the CPU: the kernels' CPU twins (slow loops) instead of ATen
  bool mixer_inputs = false;  // also return each layer's mixer input (ForwardOutput::mixer_inputs)
  // A hybrid's attention layers: also return, per query, the entropy of its attention and its mass on
  // the first kFirstTokens positions (ForwardOutput::attention_entropy, attention_first).
  bool attention_stats = false;
  // A hybrid's attention layer (its index among the attention layers; -1: none): also return what its
  // softmax reads (ForwardOutput::attention_q, attention_k), from which any row of its map is exact.
  int64_t attention_scores_of = -1;
  // A training-free intervention applied in this forward (intervention.h), or none; `position` is
  // the first token's position counted from the state the sequence started from (a forward in
  // segments passes each segment's offset), which position-dependent interventions read.
  const Intervention* intervention = nullptr;
  int64_t position = 0;
  int64_t layer = -1;         // set by the backbone for each layer's mixer
  // Logits only for positions >= logits_from (ForwardOutput::logits is then [b, L - logits_from,
  // vocab]): a forward whose first positions only warm the state up (the state-reset reference's
  // windows) skips their final norm and LM head.
  int64_t logits_from = 0;
};

struct ForwardOutput {
  torch::Tensor logits;          // [b, L, vocab] ([b, L - logits_from, vocab] with ForwardOptions::logits_from)
  ModelState final_state;        // state after the last token
  torch::Tensor norm_per_head;   // [n_layer, b, L, groups] ||S_t||_F per group (head) (if requested)
  torch::Tensor norm;            // [n_layer, b, L] ||S_t||_F over the whole layer (if requested)
  torch::Tensor delta_norm;      // [n_layer, b, L] ||S_t - S_{t-1}||_F over the whole layer (with the norms)
  // [n_layer, b, L, groups] log of the factor the state decays by at token t, dt_t * A (<= 0), mean
  // over the group (Mamba-2 and Gated DeltaNet: the head's own dt_t A; Mamba-1: over its channels and
  // d_state; GLA: the gate's log, over the key dimensions); if requested.
  torch::Tensor log_decay;
  // Per layer, the normed residual stream its mixer reads [b, L, d_model] (if requested): what the
  // analyses that open a layer up (effective attention) start from.
  std::vector<torch::Tensor> mixer_inputs;
  // A hybrid's attention layers, in layer order (if requested, ForwardOptions::attention_stats):
  // [n_attention, b, L, heads] the entropy of each query's attention over the positions it reads, in
  // bits, and the share of it on the sequence's first kFirstTokens positions (0 .. kFirstTokens - 1 of
  // the cache: the "sink" a softmax parks its mass on). Float64-able, at the computation's dtype.
  torch::Tensor attention_entropy, attention_first;
  // ForwardOptions::attention_scores_of's layer: queries [b, heads, L, d] and keys [b, heads, T, d] (the
  // cache's T positions, each key/value head repeated for its query heads) after norms and RoPE, the
  // scale, and the window it read under (0: none). Its map: softmax(scale q k^T) over the positions
  // s <= t (and s > t - window), t counted from T - L.
  torch::Tensor attention_q, attention_k;
  double attention_scale = 0;
  int64_t attention_window = 0;
};

// How many leading positions "the first tokens" of ForwardOutput::attention_first are.
inline constexpr int64_t kFirstTokens = 4;

// A module holding a "weight" (and optionally a "bias") parameter, so names match checkpoints.
class ParamHolderImpl : public torch::nn::Module {
 public:
  ParamHolderImpl(std::vector<int64_t> weight_shape, bool with_bias, int64_t bias_size = 0);
  torch::Tensor weight, bias;
};
TORCH_MODULE(ParamHolder);

// A selective scan's terms for one layer, read from its mixer input (ForwardOptions::mixer_inputs):
// h_t = exp(dt_t A) h_{t-1} + dt_t B_t x_t, y_t = C_t h_t. What effective attention and LongMamba's
// calibration read, for any architecture whose capabilities say effective_attention.
//   Mamba-2: dt [b, L, heads], A [heads] (one rate per head), B, C [b, L, groups, N];
//            heads_per_group heads share one B and C.
//   Mamba-1: dt [b, L, channels], A [channels, N] (a rate per channel and state entry), B, C [b, L, N];
//            per_channel_A.
struct SelectiveScanTerms {
  torch::Tensor dt, A, B, C;
  bool per_channel_A = false;
  int64_t heads_per_group = 1;
};

class RecurrentLMImpl : public torch::nn::Module {
 public:
  // tokens [b, L] int64 in [0, vocab); init: one LayerState per recurrent layer (either tensor of a
  // layer may be undefined = zeros; none at all: zeros) and a hybrid's attention caches (none: empty),
  // or nullptr for the zero state. Autograd flows through init too.
  // Without options: forward_options(), i.e. the run's scan.
  ForwardOutput forward(const torch::Tensor& tokens, const ModelState* init = nullptr) {
    return forward(tokens, init, forward_options());
  }
  virtual ForwardOutput forward(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt) = 0;

  virtual const ModelConfig& model_config() const = 0;
  std::string architecture() const { return statescope::architecture(model_config()); }
  const StateLayout& state_layout() const { return layout_; }
  int64_t vocab_size() const { return statescope::vocab_size(model_config()); }
  int64_t n_layer() const { return statescope::n_layer(model_config()); }

  // Zeros of the layout's shapes on the model's device (the SSM state in at least float32).
  ModelState zero_state(int64_t batch) const;

  // Parameter names (as named_parameters() gives them) that take no weight decay: the architecture's
  // A, D, dt biases, norms and embeddings (what its reference trainer exempts).
  virtual std::vector<std::string> no_weight_decay() const = 0;

  // A checkpoint's tensors under this model's parameter names, and this model's back under the
  // checkpoint's: as they are, unless the family's checkpoints fuse or name tensors otherwise
  // (Qwen3.5's Gated DeltaNet layers). `source` names the file in errors.
  virtual StateDict from_checkpoint(StateDict sd, const std::string& source) const { (void)source; return sd; }
  virtual StateDict to_checkpoint(StateDict sd) const { return sd; }

  // The embedding matrix used as output projection when tied, else lm_head.weight.  [vocab, d_model]
  virtual torch::Tensor output_weight() const = 0;
  torch::Device device() const { return output_weight().device(); }

  // The architecture's initialisation from `seed`. a_min/a_max: the A range (per head, uniform) of
  // the architectures whose capabilities say a_range (Mamba-2, Gated DeltaNet); the others refuse
  // values other than the defaults (their A init has no such range).
  virtual void reset_parameters(uint64_t seed, double a_min = 1.0, double a_max = 16.0) = 0;

  // A new model of the same architecture and config (weights not copied): copy_model fills it.
  virtual std::shared_ptr<RecurrentLMImpl> make_empty() const = 0;

  // What the architecture's layers can do (core/model/arch.h): the question callers ask, never the type.
  Capabilities capabilities() const { return statescope::capabilities(model_config()); }
  // Layer `layer`'s selective-scan terms from its mixer input [b, L, d_model] (with an initial layer
  // state: the conv's history), intervention not applied. Throws Error for an architecture whose
  // capabilities do not say effective_attention.
  virtual SelectiveScanTerms scan_terms(const torch::Tensor& mixer_input, int64_t layer, const LayerState* init);

  // Mixed precision: on a GPU forward runs under bf16 autocast (matmuls and convs in bf16); on the CPU
  // the projections and the LM head run in bf16 from cached bf16 weights (dense.h) and the rest in
  // fp32. Master weights, SSM state, A, dt, norms and the residual stream stay fp32; logits are
  // returned in fp32. Set by place_model from the run's Compute (false where the CPU has no bf16 units).
  bool mixed_bf16 = false;
  // The scan that training and the analyses ask for: the fast path (ScanImpl::Fused) or ATen's
  // (Chunked). Set by place_model from the run's Compute.
  bool fused_scan = false;
  ScanImpl scan_impl() const { return fused_scan ? ScanImpl::Fused : ScanImpl::Chunked; }
  // A training-free intervention every forward of this model applies (a training-free run's copy of
  // the loaded model carries one); null: the model as it is.
  std::shared_ptr<const Intervention> intervention;
  // The run's options for tokens starting at `position` (a segment of a longer sequence whose state
  // is carried: position-dependent interventions read it).
  ForwardOptions forward_options(int64_t position = 0) const {
    ForwardOptions o;
    o.scan = scan_impl();
    o.intervention = intervention.get();
    o.position = position;
    return o;
  }

  // Checks a [b, L] token tensor against the vocabulary; throws Error naming `source`.
  void check_tokens(const torch::Tensor& tokens, const std::string& source) const;
  // Checks a state against the layout and batch size (and for NaN/Inf); throws Error naming `source`.
  void check_state(const ModelState& s, int64_t batch, const std::string& source) const;
  // Checks a hybrid's attention caches (none, or one per attention layer of one length); throws Error.
  void check_attention(const std::vector<KVCache>& caches, int64_t batch, const std::string& source) const;

 protected:
  void set_layout(StateLayout l) { layout_ = std::move(l); }

 private:
  StateLayout layout_;
};

// The holder every caller passes around (a shared pointer, as torch's module holders are). Any
// architecture's holder (Mamba2LM, Mamba1LM, GLALM, GatedDeltaNetLM) converts to it.
class RecurrentLM : public torch::nn::ModuleHolder<RecurrentLMImpl> {
 public:
  using torch::nn::ModuleHolder<RecurrentLMImpl>::ModuleHolder;
  template <class Impl, class = std::enable_if_t<std::is_base_of_v<RecurrentLMImpl, Impl> &&
                                                 !std::is_same_v<RecurrentLMImpl, Impl>>>
  RecurrentLM(const torch::nn::ModuleHolder<Impl>& m)  // NOLINT: implicit on purpose
      : ModuleHolder(std::static_pointer_cast<RecurrentLMImpl>(m.ptr())) {}
};

// Computation dtype for norms and the SSM parameters: at least float32 (bf16/f16 models keep A, dt,
// the state and normalisation statistics in fp32), float64 stays float64.
inline torch::Dtype at_least_f32(torch::Dtype d) { return d == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32; }

// x [..., C] -> x / rms(x) * w (w undefined: no weight), statistics in >= fp32; returns x's dtype.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& w, double eps);

// fla's ShortConvolution on channel blocks side by side (GLA's and Gated DeltaNet's q|k|v): x [b, L, C]
// -> SiLU(depthwise causal conv1d, no bias) [b, L, C] from the initial conv state [b, C, W-1] (oldest
// first; undefined: zeros); weight [C, 1, W]; final_conv gets the last W-1 inputs [b, C, W-1].
torch::Tensor short_conv_silu(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& init_conv,
                              torch::Tensor& final_conv);

// bf16 autocast on one device type for the lifetime of the object (restores the previous setting).
class AutocastScope {
 public:
  explicit AutocastScope(c10::DeviceType d);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType d_;
  bool was_on_;
  at::ScalarType was_;
};

}  // namespace statescope
