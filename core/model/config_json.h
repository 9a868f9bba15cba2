// config_json.h — reading config.json fields with errors that name the file and the field. Shared by
// every architecture's config parser; no LibTorch.
#pragma once
#include <initializer_list>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace statescope {

// Parses a config.json text, accepting the JSON extension `Infinity` / `NaN` that Hugging Face writes
// (outside strings). Throws Error naming `source` when the text is not a JSON object.
nlohmann::json parse_config_text(const std::string& text, const std::string& source);

// Reads the fields of one JSON object; `prefix` (e.g. "ssm_cfg.") names nested fields in messages.
struct ConfigReader {
  const nlohmann::json& obj;
  const std::string& source;
  std::string prefix;

  bool has(const char* key) const;
  int64_t req_int(const char* key) const;
  int64_t opt_int(const char* key, int64_t dflt) const;
  double opt_num(const char* key, double dflt) const;
  bool opt_bool(const char* key, bool dflt) const;
  std::string opt_string(const char* key, const std::string& dflt) const;
  void opt_pair(const char* key, double& lo, double& hi) const;  // [lo, hi]
  [[noreturn]] void fail(const char* key, const std::string& what) const;  // "<source>: field '<key>' <what>"
};

// Positive and at most `limit`: sizes are checked before any buffer is made from them.
void require_size(int64_t v, int64_t limit, const std::string& source, const char* field);
// require_size for each {field, value, limit}, in order.
struct SizeField {
  const char* field;
  int64_t value, limit;
};
void require_sizes(const std::string& source, std::initializer_list<SizeField> fields);

// JSON text with `Infinity` written for the placeholder string "__INF__" (nlohmann cannot write it).
std::string dump_with_infinity(const nlohmann::json& j);

// The Hugging Face fields both Mamba generations read alike, with transformers' defaults where the two
// agree (d_state and the tied head default differently: the caller reads those). hidden_act must be silu.
template <class C>
void read_hf_common(const ConfigReader& r, C& c, int64_t default_d_state, bool default_tied) {
  c.d_model = r.req_int("hidden_size");
  c.n_layer = r.req_int("num_hidden_layers");
  c.vocab_size = r.req_int("vocab_size");
  c.pad_vocab_size_multiple = 1;  // HF stores the padded size directly
  c.d_state = r.opt_int("state_size", default_d_state);
  c.expand = r.opt_int("expand", 2);
  c.d_conv = r.opt_int("conv_kernel", 4);
  c.norm_eps = r.opt_num("layer_norm_epsilon", 1e-5);
  c.residual_in_fp32 = r.opt_bool("residual_in_fp32", true);
  c.tie_embeddings = r.opt_bool("tie_word_embeddings", default_tied);
  c.conv_bias = r.opt_bool("use_conv_bias", true);
  c.proj_bias = r.opt_bool("use_bias", false);
  c.dt_min = r.opt_num("time_step_min", 0.001);
  c.dt_max = r.opt_num("time_step_max", 0.1);
  c.dt_init_floor = r.opt_num("time_step_floor", 1e-4);
  if (r.has("hidden_act") && r.obj["hidden_act"] != "silu") r.fail("hidden_act", "is " + r.obj["hidden_act"].dump() + "; only silu is supported");
}

// The Hugging Face fields both Mamba generations write alike (C: Mamba1Config or Mamba2Config, whose
// fields share these names). Keys are sorted on output, so the order here does not matter.
template <class C>
void write_hf_common(nlohmann::json& j, const C& c) {
  j["hidden_size"] = c.d_model;
  j["num_hidden_layers"] = c.n_layer;
  j["vocab_size"] = c.vocab_size;
  j["state_size"] = c.d_state;
  j["expand"] = c.expand;
  j["conv_kernel"] = c.d_conv;
  j["layer_norm_epsilon"] = c.norm_eps;
  j["residual_in_fp32"] = c.residual_in_fp32;
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["use_conv_bias"] = c.conv_bias;
  j["use_bias"] = c.proj_bias;
  j["hidden_act"] = "silu";
  j["time_step_min"] = c.dt_min;
  j["time_step_max"] = c.dt_max;
  j["time_step_floor"] = c.dt_init_floor;
  j["pad_token_id"] = 0;
  j["bos_token_id"] = 0;
  j["eos_token_id"] = 0;
}

// ---- flash-linear-attention's models (GLA, Gated DeltaNet) ----

// fla's GatedMLP width: intermediate_size when given (> 0), else int(d_model * hidden_ratio * 2/3)
// rounded up to a multiple of 256.
int64_t fla_mlp_size(int64_t d_model, int64_t hidden_ratio, int64_t intermediate_size);

// Refuses by name what no fla model statescope loads implements: hybrid softmax-attention layers
// (attn), attention residuals (attnres_block_size), the L2-warp loss, an MLP activation other than
// swish; attn_mode must be one of `modes` (fla's for that model). `title` names the model in messages.
void refuse_fla_extras(const ConfigReader& r, const std::string& title, const std::vector<std::string>& modes);

// The fields every fla config names alike, with fla's defaults (num_hidden_layers' differs per model).
template <class C>
void read_fla_common(const ConfigReader& r, C& c, int64_t default_layers) {
  c.d_model = r.opt_int("hidden_size", 2048);
  c.n_layer = r.opt_int("num_hidden_layers", default_layers);
  c.hidden_ratio = r.has("hidden_ratio") ? r.req_int("hidden_ratio") : 4;
  c.intermediate_size = r.has("intermediate_size") ? r.req_int("intermediate_size") : 0;
  c.use_short_conv = r.opt_bool("use_short_conv", c.use_short_conv);  // the caller's default is fla's for the model
  c.conv_size = r.opt_int("conv_size", 4);
  c.norm_eps = r.opt_num("norm_eps", 1e-6);
  c.vocab_size = r.opt_int("vocab_size", 32000);
  c.tie_embeddings = r.opt_bool("tie_word_embeddings", false);
  c.initializer_range = r.opt_num("initializer_range", 0.02);
}

// ... and written back, with what statescope runs (no hybrid layers, swish, the transformers-style loss).
template <class C>
void write_fla_common(nlohmann::json& j, const C& c) {
  j["hidden_size"] = c.d_model;
  j["num_hidden_layers"] = c.n_layer;
  j["hidden_ratio"] = c.hidden_ratio;
  j["intermediate_size"] = c.mlp_size();
  j["use_short_conv"] = c.use_short_conv;
  j["conv_size"] = c.conv_size;
  j["norm_eps"] = c.norm_eps;
  j["attn"] = nullptr;
  j["attn_mode"] = "chunk";
  j["hidden_act"] = "swish";
  j["vocab_size"] = c.vocab_size;
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["initializer_range"] = c.initializer_range;
  j["fuse_cross_entropy"] = false;  // transformers-style loss on any device
  j["fuse_swiglu"] = true;
}

}  // namespace statescope
