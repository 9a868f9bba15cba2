// model_config.h — the configuration of any architecture statescope knows, and what the rest of the
// program asks of it without knowing which one it is: sizes, the state layout, the parameter count,
// config.json in and out. The architecture is chosen by the checkpoint's `model_type` (Hugging Face)
// or `ssm_cfg.layer` (mamba_ssm); fla's models by their model_type. Each function folds over the
// registered architectures (architectures.h), each answering through its Arch<Config>. No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/model/architectures.h"  // ModelConfig: every architecture's registration
#include "core/model/state_layout.h"

namespace statescope {

// A fresh byte-level model's config from its shape (pretrain_shape.h; vocab 256, tied embeddings;
// Arch<Config>::from_pretrain in its folder), validated: Error starting with `where` (headdim not
// dividing expand x d_model, an unknown arch, ...).
ModelConfig shape_config(const PretrainShape& s, const std::string& where);
// "mamba2", "mamba1", "gla", "gated_deltanet": the name in results, specs and `forward`'s attributes.
std::string architecture(const ModelConfig& c);
// "Mamba-2", "Mamba-1", "GLA", "Gated DeltaNet": the name people read.
std::string architecture_title(const ModelConfig& c);
// Every architecture name statescope knows, for messages: "mamba2 (Mamba-2), mamba1 (Mamba-1), ...".
std::string known_architectures();
// The architecture's `key` as a registered one ("" when none is): pretrain --arch, a spec's arch.
bool is_architecture(const std::string& key);
// What the architecture's layers can do (core/model/arch.h): asked, never inferred from the type.
Capabilities capabilities(const ModelConfig& c);

int64_t vocab_size(const ModelConfig& c);
int64_t n_layer(const ModelConfig& c);
int64_t d_model(const ModelConfig& c);
int64_t parameter_count(const ModelConfig& c);
StateLayout state_layout(const ModelConfig& c);
void validate(const ModelConfig& c, const std::string& source);

// "GLA · 2 layers · state (heads, head_k_dim, head_v_dim) 4 × 8 × 16 · 4 heads": the architecture and
// its recurrent state per layer in one line (the app's model field, runs' `architecture` attribute).
std::string architecture_line(const ModelConfig& c);

// One line per field that describes the architecture, "name value" (statescope-cli info).
Description describe(const ModelConfig& c);

// Parses config.json in either dialect for any known architecture. Throws Error naming `source` and
// the field (an unknown model_type or ssm_cfg.layer names the ones statescope knows).
ModelConfig parse_model_config(const std::string& text, const std::string& source);
ModelConfig load_model_config(const std::string& path);

// A Hugging Face config.json that transformers loads.
std::string to_hf_config_json(const ModelConfig& c);

}  // namespace statescope
