// blocks/kinds.h — what one layer of a hybrid is (issue 53). No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/state_layout.h"

namespace statescope {

// Mamba2 and GatedDeltaNet carry a recurrent state (ssm + conv); Attention a key/value cache; Mlp and
// Moe nothing between tokens.
enum class LayerKind { Mamba2, GatedDeltaNet, Attention, Mlp, Moe };

inline const char* layer_kind_name(LayerKind k) {
  switch (k) {
    case LayerKind::Mamba2: return "mamba2";
    case LayerKind::GatedDeltaNet: return "gated_deltanet";
    case LayerKind::Attention: return "attention";
    case LayerKind::Mlp: return "mlp";
    case LayerKind::Moe: return "moe";
  }
  return "?";
}

// One letter per layer, Nemotron-H's pattern letters: M Mamba-2, G Gated DeltaNet, * attention, - MLP,
// E mixture of experts ("M-*EM").
inline std::string layer_pattern(const std::vector<LayerKind>& layers) {
  std::string s;
  for (auto k : layers)
    s += k == LayerKind::Mamba2 ? 'M' : k == LayerKind::GatedDeltaNet ? 'G' : k == LayerKind::Attention ? '*' : k == LayerKind::Mlp ? '-' : 'E';
  return s;
}

inline int64_t count_kind(const std::vector<LayerKind>& layers, LayerKind k) {
  int64_t n = 0;
  for (auto x : layers) n += x == k;
  return n;
}

// A hybrid's state layout: its recurrent layers' layout `l` (n_layer counting them), every layer's kind
// and its attention layers' caches [b, kv_heads, positions, head_dim], read by `heads` query heads.
inline StateLayout hybrid_layout(StateLayout l, const std::vector<LayerKind>& layers, int64_t heads, int64_t kv_heads,
                                 int64_t head_dim) {
  for (auto k : layers) l.layer_kinds.push_back(layer_kind_name(k));
  l.attention_layers = count_kind(layers, LayerKind::Attention), l.kv_heads = kv_heads, l.head_dim = head_dim;
  l.attention_heads = heads;
  return l;
}

// A hybrid family's config.json as it was read (`json`); Error naming the family for a config made otherwise.
inline std::string stored_config_json(const std::string& json, const std::string& family) {
  if (json.empty()) throw Error("a " + family + " config that was not read from a config.json cannot be written yet");
  return json;
}

// A fresh hybrid's layer pattern (PretrainShape::layers): one letter of `letters` per layer (M Mamba-2,
// G Gated DeltaNet, * attention, - MLP, E experts), n_layer of them; Error naming `where` otherwise.
inline std::vector<LayerKind> parse_layer_pattern(const std::string& pattern, int64_t n_layer, const std::string& letters,
                                                  const std::string& where) {
  if (static_cast<int64_t>(pattern.size()) != n_layer)
    throw Error(where + ": field 'layers' (\"" + pattern + "\") must give one letter per layer, n_layer " + std::to_string(n_layer));
  std::vector<LayerKind> out;
  for (char ch : pattern) {
    if (letters.find(ch) == std::string::npos)
      throw Error(where + ": field 'layers' holds '" + std::string(1, ch) + "'; this family's letters are " + letters +
                  " (M Mamba-2, G Gated DeltaNet, * attention, - MLP)");
    out.push_back(ch == 'M' ? LayerKind::Mamba2 : ch == 'G' ? LayerKind::GatedDeltaNet : ch == '*' ? LayerKind::Attention
                  : ch == '-' ? LayerKind::Mlp : LayerKind::Moe);
  }
  return out;
}

}  // namespace statescope
