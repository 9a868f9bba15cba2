// blocks/attention.h — softmax attention as transformers writes it for the hybrids of 2026 (issue 53):
// grouped-query attention with an optional rotary position embedding (half rotation, over all of a
// head or its first partial_rotary share), no positional encoding at all (Nemotron-H, Granite's NoPE),
// zero-centred q/k RMSNorms (Qwen3.5, Qwen3-Next), Qwen's sigmoid output gate, Granite's
// attention_multiplier as the score scale and Falcon-H1's key_multiplier. Module names are the
// checkpoints' (q_proj, k_proj, v_proj, o_proj, q_norm, k_norm); the family's parser (later) fills
// the config from its config.json. The key/value cache is the layer's state: keys after the key
// multiplier, the norm and RoPE, as transformers caches them.
#pragma once
#include "core/model/recurrent_lm.h"

namespace statescope {

struct AttentionConfig {
  int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool bias = false;            // q, k, v and o projections with biases
  bool output_gate = false;     // q_proj's rows per head are [q (head_dim) | gate (head_dim)]; out = attn * sigmoid(gate)
  bool qk_norm = false;         // q and k RMS-normed over head_dim with zero-centred weights (1 + w), before RoPE
  double norm_eps = 1e-6;
  double rope_theta = 0;        // 0: no positional encoding
  double partial_rotary = 1.0;  // the share of head_dim that rotates (its first dims)
  double scaling = 0;           // the score scale; 0: head_dim^-0.5
  double key_multiplier = 1.0;  // k = k_proj(x) * key_multiplier, before RoPE
  int64_t rotary_dim() const;   // int(head_dim * partial_rotary), even
  // Throws Error naming `source` when a size is inconsistent.
  void validate(const std::string& source) const;
};

// What each query of one attention call read (ForwardOutput::attention_entropy and _first), computed
// from the softmax the output uses: entropy [b, L, heads] in bits (0: one position; log2(n): n alike)
// and the mass on positions 0 .. kFirstTokens - 1 of the cache [b, L, heads].
struct AttentionProbe {
  torch::Tensor entropy, first;
  // With keep_qk: the queries [b, heads, L, d] and keys [b, heads, T, d] the scores came from (keys
  // repeated per query head) and the scale (ForwardOutput::attention_q, attention_k).
  bool keep_qk = false;
  torch::Tensor q, k;
  double scale = 0;
};

class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const AttentionConfig& c);
  // x [b, L, hidden] at positions cache->length() ... (0 without a cache) -> [b, L, hidden]; the
  // cache, when given, gets this call's keys and values appended. Causal: position p reads 0..p.
  // window > 0: position p reads only p - window + 1 .. p (the cache still keeps every key).
  // probe, when given, gets what each query read (AttentionProbe).
  torch::Tensor forward(const torch::Tensor& x, KVCache* cache = nullptr, int64_t window = 0, AttentionProbe* probe = nullptr);
  AttentionConfig cfg;
  ParamHolder q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr}, q_norm{nullptr}, k_norm{nullptr};
};
TORCH_MODULE(Attention);

// Rotary embedding of x [b, L, heads, head_dim] at positions first ... first+L-1 over its first
// `rotary_dim` dims (half rotation: pairs (i, i + rotary_dim/2)); cos and sin computed in float32 from
// inv_freq = theta^(-2i/rotary_dim), as transformers does, then taken to x's dtype.
torch::Tensor apply_rope(const torch::Tensor& x, int64_t first, int64_t rotary_dim, double theta);

}  // namespace statescope
