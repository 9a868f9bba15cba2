// mamba1/config.h — Mamba-1 (selective scan) architecture, read from Hugging Face (model_type
// "mamba", MambaForCausalLM) or mamba_ssm (config.json whose ssm_cfg has no layer, or "Mamba1").
//
// Field names follow mamba_ssm; the Hugging Face names are in brackets. No LibTorch here.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace statescope {

struct Mamba1Config {
  int64_t d_model = 64;            // [hidden_size]
  int64_t n_layer = 2;             // [num_hidden_layers]
  int64_t d_state = 16;            // [state_size]
  int64_t expand = 2;
  int64_t d_conv = 4;              // [conv_kernel]
  int64_t dt_rank = 0;             // [time_step_rank]; 0 = "auto" = ceil(d_model / 16)
  int64_t vocab_size = 256;        // already padded to pad_vocab_size_multiple
  int64_t pad_vocab_size_multiple = 16;
  double norm_eps = 1e-5;          // [layer_norm_epsilon]
  bool residual_in_fp32 = true;
  bool tie_embeddings = true;      // [tie_word_embeddings]; both libraries default to tied
  bool conv_bias = true;           // [use_conv_bias]
  bool proj_bias = false;          // [use_bias]: bias on in_proj and out_proj
  double dt_min = 0.001, dt_max = 0.1, dt_init_floor = 1e-4, dt_scale = 1.0;  // initialisation only

  int64_t d_inner() const { return expand * d_model; }
  int64_t rank() const { return dt_rank > 0 ? dt_rank : (d_model + 15) / 16; }
  int64_t x_proj_rows() const { return rank() + 2 * d_state; }

  int64_t parameter_count() const;
  // Throws Error naming `source` and the field when a size is inconsistent or above the limits.
  void validate(const std::string& source) const;
};

// From a parsed config.json of either dialect (the caller has decided it is Mamba-1).
Mamba1Config parse_mamba1_hf(const nlohmann::json& j, const std::string& source);
Mamba1Config parse_mamba1_mamba_ssm(const nlohmann::json& j, const std::string& source);

// A Hugging Face config.json (model_type mamba) that transformers' MambaConfig loads.
std::string to_hf_config_json(const Mamba1Config& cfg);

}  // namespace statescope
