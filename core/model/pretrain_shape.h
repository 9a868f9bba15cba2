// pretrain_shape.h — the shape of a fresh byte-level model as `statescope-cli pretrain` and a spec's
// "pretrain" section give it: every architecture's fields side by side, each architecture reading its
// own (Arch<Config>::from_pretrain, in its folder) and writing its own flags back
// (Arch<Config>::pretrain_flags). Which fields belong to which architecture: pretrain_fields()
// (below). The copying analysis builds its fresh model from one too. No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

struct PretrainShape {
  std::string arch = "mamba2";  // an architecture's key: "mamba2" | "mamba1" | "gla" | "gated_deltanet" | "nemotron_h" | "qwen3_5" | "granite_h"
  int64_t d_model = 64, n_layer = 2, d_state = 32, expand = 2, d_conv = 4;  // GLA: d_conv with short_conv
  int64_t headdim = 16, ngroups = 1, chunk_size = 64;  // Mamba-2
  int64_t dt_rank = 0;                                  // Mamba-1 (0: ceil(d_model / 16))
  double dt_min = 0.001, dt_max = 0.1;                  // dt initialisation (log-uniform)
  double dt_limit = 0;                                  // Mamba-2: clamp dt after softplus (0: none)
  double a_min = 1, a_max = 16;                         // Mamba-2: A uniform in [a_min, a_max]
  bool freeze_A = false;                                // keep A_log at its initial value
  int64_t num_heads = 4, mlp_size = 0;                  // GLA (mlp_size 0: fla's default width)
  double expand_k = 0.5, expand_v = 1.0;                // GLA: key and value dims over d_model
  bool short_conv = false;                              // GLA: short convolutions on q, k, v
  double clamp_min = 0;                                 // GLA: floor of the log gate (< 0; 0: none, fla's null)
  int64_t head_dim = 16, v_heads = 0;                   // Gated DeltaNet: key dim per head; value heads (0: num_heads)
  bool no_short_conv = false;                           // Gated DeltaNet: no short convolutions (SiLU alone)
  // expand_v as given: GLA's value dim over d_model (unset: 1), Gated DeltaNet's value dim per head over
  // head_dim (unset: 2, fla's default).
  bool expand_v_set = false;
  // Hybrids (Nemotron-H, Qwen3.5, Granite 4.0-H): the layer pattern, one letter per layer (Nemotron-H: M
  // Mamba-2, * attention, - relu^2 MLP; Qwen3.5: G Gated DeltaNet, * attention; Granite 4.0-H: M Mamba-2,
  // * attention; in both of the last each followed by its MLP), n_layer
  // letters; the attention layers' heads, key/value heads and head dim. The recurrent layers take the
  // fields above (Nemotron-H: Mamba-2's d_state, headdim, ngroups, expand, chunk_size, dt_limit;
  // Qwen3.5: Gated DeltaNet's num_heads, head_dim, v_heads, expand_v), the MLPs mlp_size (0: 4 x d_model).
  std::string layers;
  int64_t attention_heads = 4, kv_heads = 2, attention_head_dim = 16;
};

class JsonFields;

// Which architectures own a model field, by its spec name and its CLI flag: a field given for
// another architecture is refused by name, never ignored (a spec: "field 'pretrain.headdim' is a
// Mamba-2 setting; arch \"mamba1\" has none"; the CLI: "--headdim is a Mamba-2 option; --arch mamba1
// has no such setting"). Fields every architecture has (d_model, n_layer, d_conv) are not listed.
struct PretrainField {
  const char* spec;                 // "headdim"
  const char* flag;                 // "--headdim"
  const char* whose;                // "Mamba-2": the owners, as people read them
  std::vector<std::string> archs;   // the owners' keys
  bool owned_by(const std::string& arch) const;
};
const std::vector<PretrainField>& pretrain_fields();

// The model fields' names in a section ("arch", "d_model", ...).
const std::vector<std::string>& shape_keys();
// Reads the model fields of `f` into `p` ("arch" first: a field of another architecture is refused by
// name). Unknown keys are the caller's to refuse (JsonFields::only).
void read_shape(const JsonFields& f, PretrainShape& p);
// Every initialisation range sane: Error "<where>: field '<prefix><name>' ...".
void check_shape(const PretrainShape& s, const std::string& where, const std::string& prefix);
// shape_config (model_config.h) makes the architecture's config of a shape.

// A number as the pretrain command writes it (shortest round trip of the default stream format).
std::string pretrain_number(double v);

}  // namespace statescope
