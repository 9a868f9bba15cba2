// state_layout.h — what one recurrent layer carries between tokens, as named axes, for every
// architecture: the policies (noise, fitted moments, passing, TBTT), state norms, histograms, the
// detector, `forward`'s datasets and the views take their sizes from here, never from an
// architecture's config. No LibTorch.
//
//   Mamba-2: ssm (heads, headdim, d_state), conv (conv_dim, d_conv-1); groups = heads.
//   Mamba-1: ssm (d_inner, d_state), conv (d_inner, d_conv-1); groups = channel groups of at most 64
//            consecutive channels (mamba-130m: 24 groups of 64, the same unit as mamba2-130m's 24
//            heads of 64 channels), so per-head views, fitted noise and the detector compare like
//            with like across the two.
//   Hybrids (Nemotron-H, Qwen3.5): their recurrent layers' layout (Mamba-2's or Gated DeltaNet's),
//            n_layer counting those alone, with every layer's kind and the attention caches beside.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

struct StateAxis {
  std::string name;  // e.g. "heads", "headdim", "d_state", "d_inner", "conv_dim", "d_conv-1"
  int64_t size = 0;
};

struct StateLayout {
  std::string architecture;     // "mamba2", "mamba1"
  int64_t n_layer = 0;
  std::vector<StateAxis> ssm;   // after the batch axis
  std::vector<StateAxis> conv;  // after the batch axis; empty when the architecture has no conv state
  // The per-head views' unit: the first ssm axis cut into `groups` equal runs. Every group-level
  // statistic (norm per head, fitted mean and std, the detector's cells) is over one run's entries.
  int64_t groups = 1;
  std::string group_name;       // "head", "channel group"
  // A hybrid's layers (issue 53): every layer's kind in order ("mamba2", "gated_deltanet",
  // "attention", "mlp", "moe"), n_layer above counting the recurrent ones; its attention layers'
  // key/value caches [b, kv_heads, positions, head_dim], read by attention_heads query heads each.
  // Empty and 0 for a pure recurrent model.
  std::vector<std::string> layer_kinds;
  int64_t attention_layers = 0, kv_heads = 0, head_dim = 0, attention_heads = 0;

  std::vector<int64_t> ssm_shape(int64_t batch) const;   // {batch, ssm sizes...}
  std::vector<int64_t> conv_shape(int64_t batch) const;  // {batch, conv sizes...}; {} when none
  int64_t ssm_numel() const;                             // entries per sequence and layer
  int64_t group_numel() const { return ssm_numel() / groups; }
  std::string ssm_axes() const;                          // "(heads, headdim, d_state)"
  std::string conv_axes() const;                         // "(conv_dim, d_conv-1)"
  // The model's layer index of recurrent layer r (r itself in a pure recurrent model).
  int64_t model_layer(int64_t r) const;
  bool operator==(const StateLayout&) const = default;
};

// Mamba-1's channel groups: the fewest groups of equal size at most 64 that tile d_inner.
int64_t channel_groups(int64_t d_inner);

}  // namespace statescope
