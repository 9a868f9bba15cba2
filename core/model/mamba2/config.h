// mamba2/config.h — Mamba-2 architecture configuration, read from Hugging Face or mamba_ssm config.json.
//
// Field names follow mamba_ssm; the Hugging Face names are given in brackets. Derived sizes are
// methods so they can never disagree with the fields they come from. No LibTorch here.
#pragma once
#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace statescope {

struct Mamba2Config {
  int64_t d_model = 64;            // [hidden_size]
  int64_t n_layer = 2;             // [num_hidden_layers]
  int64_t d_state = 128;           // [state_size]
  int64_t headdim = 64;            // [head_dim]
  int64_t expand = 2;
  int64_t ngroups = 1;             // [n_groups]
  int64_t d_conv = 4;              // [conv_kernel]
  int64_t chunk_size = 256;
  int64_t vocab_size = 256;        // already padded to pad_vocab_size_multiple
  int64_t pad_vocab_size_multiple = 16;
  double norm_eps = 1e-5;          // [layer_norm_epsilon]
  bool residual_in_fp32 = true;
  bool tie_embeddings = true;      // [tie_word_embeddings]; HF defaults to false, mamba_ssm to true
  bool conv_bias = true;           // [use_conv_bias]
  bool proj_bias = false;          // [use_bias]: bias on in_proj and out_proj
  // Gated RMSNorm over each group of d_inner/ngroups channels (mamba_ssm, transformers >= 5) or
  // over all of d_inner (transformers 4.x). Identical when ngroups == 1.
  bool norm_per_group = true;
  double dt_min = 0.001, dt_max = 0.1, dt_init_floor = 1e-4;   // initialisation only
  // dt_limit [time_step_limit]: clamp after softplus. (0, inf) means no clamp.
  double dt_limit_lo = 0.0;
  double dt_limit_hi = std::numeric_limits<double>::infinity();

  // The mixer's width when a checkpoint states it apart from expand (Nemotron-H's
  // mamba_num_heads * mamba_head_dim, Falcon-H1's mamba_d_ssm); 0: expand * d_model.
  int64_t d_inner_override = 0;
  int64_t d_inner() const { return d_inner_override > 0 ? d_inner_override : expand * d_model; }
  int64_t nheads() const { return d_inner() / headdim; }
  int64_t conv_dim() const { return d_inner() + 2 * ngroups * d_state; }
  int64_t in_proj_rows() const { return 2 * d_inner() + 2 * ngroups * d_state + nheads(); }
  bool has_dt_limit() const {
    return dt_limit_lo > 0.0 || dt_limit_hi < std::numeric_limits<double>::infinity();
  }

  // Every parameter the model holds (embedding, lm_head when untied, layers, final norm).
  int64_t parameter_count() const;

  // Throws Error naming `source` and the field when a size is inconsistent or above the limits below.
  void validate(const std::string& source) const;
  static constexpr int64_t kMaxDModel = 65536, kMaxLayers = 1024, kMaxDState = 4096, kMaxVocab = 4194304;
  static constexpr int64_t kMaxParameters = 100'000'000'000;
};

// From a parsed config.json of either dialect (the caller has decided it is Mamba-2).
Mamba2Config parse_mamba2_hf(const nlohmann::json& j, const std::string& source);
Mamba2Config parse_mamba2_mamba_ssm(const nlohmann::json& j, const std::string& source);

// A config.json of a Mamba-2 (either dialect; parse_model_config in model_config.h reads any
// architecture): a config of another architecture is an error naming it. `source` names the file.
Mamba2Config parse_config_json(const std::string& text, const std::string& source);
Mamba2Config load_config_file(const std::string& path);

// A Hugging Face config.json (model_type mamba2) that transformers' Mamba2Config loads.
std::string to_hf_config_json(const Mamba2Config& cfg);

}  // namespace statescope
