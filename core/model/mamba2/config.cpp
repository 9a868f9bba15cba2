// mamba2/config.cpp — both config.json dialects into Mamba2Config.
#include "core/model/mamba2/config.h"
#include "core/model/mamba2/arch.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/model/config_json.h"
#include "core/model/model_config.h"
#include "core/model/pretrain_shape.h"

namespace statescope {

using nlohmann::json;
using Reader = ConfigReader;

Mamba2Config parse_mamba2_hf(const json& j, const std::string& source) {
  Reader r{j, source, ""};
  Mamba2Config c;
  read_hf_common(r, c, /*default_d_state=*/128, /*default_tied=*/false);  // transformers' Mamba2Config defaults
  c.headdim = r.opt_int("head_dim", 64);
  c.ngroups = r.opt_int("n_groups", 8);
  c.chunk_size = r.opt_int("chunk_size", 256);
  // The gated RMSNorm normalises each group of d_inner/ngroups channels in mamba_ssm and in
  // transformers >= 5 (MambaRMSNormGated(group_size=...)); transformers 4.x normalised over all of
  // d_inner. The two agree for ngroups == 1. statescope follows the reference (per group); a config
  // may ask for the old HF behaviour with "statescope_norm_per_group": false.
  c.norm_per_group = r.opt_bool("statescope_norm_per_group", true);
  r.opt_pair("time_step_limit", c.dt_limit_lo, c.dt_limit_hi);
  if (!r.opt_bool("rms_norm", true))
    throw Error(source + ": field 'rms_norm' is false; only the gated-RMSNorm Mamba-2 is supported");
  if (r.has("num_heads")) {
    const int64_t nh = r.req_int("num_heads");
    if (nh * c.headdim != c.expand * c.d_model)
      throw Error(source + ": field 'num_heads' (" + std::to_string(nh) + ") times 'head_dim' (" +
                  std::to_string(c.headdim) + ") must equal expand*hidden_size (" +
                  std::to_string(c.expand * c.d_model) + ")");
  }
  return c;
}

Mamba2Config parse_mamba2_mamba_ssm(const json& j, const std::string& source) {
  Reader r{j, source, ""};
  Mamba2Config c;
  c.d_model = r.req_int("d_model");
  c.n_layer = r.req_int("n_layer");
  const int64_t raw_vocab = r.req_int("vocab_size");
  c.pad_vocab_size_multiple = r.opt_int("pad_vocab_size_multiple", 8);
  if (c.pad_vocab_size_multiple < 1)
    throw Error(source + ": field 'pad_vocab_size_multiple' must be >= 1");
  const int64_t m = c.pad_vocab_size_multiple;
  c.vocab_size = (raw_vocab + m - 1) / m * m;
  c.tie_embeddings = r.opt_bool("tie_embeddings", true);
  c.residual_in_fp32 = r.opt_bool("residual_in_fp32", true);
  if (!r.opt_bool("rms_norm", true))
    throw Error(source + ": field 'rms_norm' is false; only RMSNorm Mamba-2 models are supported");
  if (r.opt_int("d_intermediate", 0) != 0)
    throw Error(source + ": field 'd_intermediate' is non-zero (MLP blocks); not supported");
  if (r.has("attn_layer_idx") && !j["attn_layer_idx"].empty())
    throw Error(source + ": field 'attn_layer_idx' is not empty: hybrid models with attention "
                "layers are not supported");
  if (!r.has("ssm_cfg") || !j["ssm_cfg"].is_object() || !j["ssm_cfg"].contains("layer"))
    throw Error(source + ": field 'ssm_cfg.layer' is missing; mamba_ssm then builds Mamba-1, "
                "which statescope does not support");
  const json& s = j["ssm_cfg"];
  if (s["layer"] != "Mamba2")
    throw Error(source + ": field 'ssm_cfg.layer' is " + s["layer"].dump() +
                "; only Mamba2 is supported");
  Reader rs{s, source, "ssm_cfg."};
  c.d_state = rs.opt_int("d_state", 128);
  c.d_conv = rs.opt_int("d_conv", 4);
  c.expand = rs.opt_int("expand", 2);
  c.headdim = rs.opt_int("headdim", 64);
  c.ngroups = rs.opt_int("ngroups", 1);
  c.chunk_size = rs.opt_int("chunk_size", 256);
  c.conv_bias = rs.opt_bool("conv_bias", true);
  c.proj_bias = rs.opt_bool("bias", false);
  c.dt_min = rs.opt_num("dt_min", 0.001);
  c.dt_max = rs.opt_num("dt_max", 0.1);
  c.dt_init_floor = rs.opt_num("dt_init_floor", 1e-4);
  rs.opt_pair("dt_limit", c.dt_limit_lo, c.dt_limit_hi);
  if (!rs.opt_bool("rmsnorm", true))
    throw Error(source + ": field 'ssm_cfg.rmsnorm' is false; not supported");
  if (rs.opt_bool("norm_before_gate", false))
    throw Error(source + ": field 'ssm_cfg.norm_before_gate' is true; not supported");
  if (rs.has("d_ssm") && rs.req_int("d_ssm") != c.expand * c.d_model)
    throw Error(source + ": field 'ssm_cfg.d_ssm' differs from expand*d_model; not supported");
  c.norm_per_group = true;
  return c;
}

int64_t Mamba2Config::parameter_count() const {
  const int64_t D = d_model, V = vocab_size, DI = d_inner(), H = nheads();
  const int64_t per_layer = D                                            // norm
                            + in_proj_rows() * D + (proj_bias ? in_proj_rows() : 0)  // in_proj
                            + conv_dim() * d_conv + (conv_bias ? conv_dim() : 0)     // conv1d
                            + 3 * H                                      // dt_bias, A_log, D
                            + DI                                         // gated norm
                            + D * DI + (proj_bias ? D : 0);              // out_proj
  return V * D * (tie_embeddings ? 1 : 2) + n_layer * per_layer + D;
}

void Mamba2Config::validate(const std::string& source) const {
  // Limits well above every published Mamba-2 (2.7B: d_model 2560, 64 layers, d_state 128, vocab 50288).
  require_size(d_model, kMaxDModel, source, "d_model");
  require_size(n_layer, kMaxLayers, source, "n_layer");
  require_size(d_state, kMaxDState, source, "d_state");
  require_size(headdim, kMaxDState, source, "headdim");
  require_size(expand, 16, source, "expand");
  require_size(ngroups, 1024, source, "ngroups");
  require_size(d_conv, 64, source, "d_conv");
  require_size(chunk_size, 65536, source, "chunk_size");
  require_size(vocab_size, kMaxVocab, source, "vocab_size");
  if (parameter_count() > kMaxParameters)
    throw Error(source + ": describes " + std::to_string(parameter_count()) + " parameters, above statescope's limit of " +
                std::to_string(kMaxParameters));
  if (d_inner_override < 0 || d_inner_override > 16 * kMaxDModel)
    throw Error(source + ": the mixer's width (" + std::to_string(d_inner_override) + ") must be in [1, " +
                std::to_string(16 * kMaxDModel) + "]");
  if (d_inner() % headdim != 0)
    throw Error(source + ": expand*d_model (" + std::to_string(d_inner()) +
                ") is not a multiple of headdim (" + std::to_string(headdim) + ")");
  if (nheads() % ngroups != 0)
    throw Error(source + ": nheads (" + std::to_string(nheads()) + ") is not a multiple of ngroups (" +
                std::to_string(ngroups) + ")");
  if (!(norm_eps > 0 && norm_eps <= 1))  // finite: Infinity would zero every logit
    throw Error(source + ": field 'norm_eps' must be in (0, 1], got " + std::to_string(norm_eps));
  if (!(dt_limit_lo >= 0) || !(dt_limit_hi > dt_limit_lo))
    throw Error(source + ": dt_limit must satisfy 0 <= lo < hi");
}

Mamba2Config parse_config_json(const std::string& text, const std::string& source) {
  ModelConfig c = parse_model_config(text, source);
  if (!std::holds_alternative<Mamba2Config>(c))
    throw Error(source + ": a " + architecture_title(c) + " config where a Mamba-2 one was expected");
  return std::get<Mamba2Config>(c);
}

Mamba2Config load_config_file(const std::string& path) {
  return parse_config_json(read_file_bounded(path, kMaxJsonBytes, "config file"), path);
}

std::string to_hf_config_json(const Mamba2Config& c) {
  json j;
  write_hf_common(j, c);
  j["architectures"] = {"Mamba2ForCausalLM"};
  j["model_type"] = "mamba2";
  j["head_dim"] = c.headdim;
  j["num_heads"] = c.nheads();
  j["n_groups"] = c.ngroups;
  j["chunk_size"] = c.chunk_size;
  j["rms_norm"] = true;
  if (!c.norm_per_group && c.ngroups > 1) j["statescope_norm_per_group"] = false;
  j["time_step_rank"] = "auto";
  // Placeholder for Infinity; nlohmann cannot write non-finite numbers.
  j["time_step_limit"] = {c.dt_limit_lo, std::isfinite(c.dt_limit_hi) ? json(c.dt_limit_hi) : json("__INF__")};
  return dump_with_infinity(j);
}

// The registration's layout and description (arch.h).
StateLayout Arch<Mamba2Config>::layout(const Mamba2Config& m) {
  StateLayout l;
  l.n_layer = m.n_layer;
  l.ssm = {{"heads", m.nheads()}, {"headdim", m.headdim}, {"d_state", m.d_state}};
  l.conv = {{"conv_dim", m.conv_dim()}, {"d_conv-1", m.d_conv - 1}};
  l.groups = m.nheads();
  l.group_name = "head";
  return l;
}

Description Arch<Mamba2Config>::describe(const Mamba2Config& m) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return {{"d_state", n(m.d_state)}, {"headdim", n(m.headdim)}, {"nheads", n(m.nheads())},
          {"ngroups", n(m.ngroups)}, {"d_conv", n(m.d_conv)}, {"chunk_size", n(m.chunk_size)}};
}

Mamba2Config Arch<Mamba2Config>::from_pretrain(const PretrainShape& s) {
  Mamba2Config c;
  c.d_model = s.d_model, c.n_layer = s.n_layer, c.d_state = s.d_state, c.headdim = s.headdim, c.expand = s.expand;
  c.d_conv = s.d_conv, c.ngroups = s.ngroups, c.chunk_size = s.chunk_size, c.vocab_size = 256, c.tie_embeddings = true;
  c.dt_min = s.dt_min, c.dt_max = s.dt_max, c.dt_init_floor = std::min(c.dt_init_floor, s.dt_min);
  if (s.dt_limit > 0) c.dt_limit_hi = s.dt_limit;
  return c;
}

std::string Arch<Mamba2Config>::pretrain_flags(const PretrainShape& s) {
  const auto n = pretrain_number;
  return " --d-state " + std::to_string(s.d_state) + " --expand " + std::to_string(s.expand) + " --headdim " +
         std::to_string(s.headdim) + " --ngroups " + std::to_string(s.ngroups) + " --chunk-size " +
         std::to_string(s.chunk_size) + " --a-min " + n(s.a_min) + " --a-max " + n(s.a_max) +
         (s.dt_limit > 0 ? " --dt-limit " + n(s.dt_limit) : std::string()) + " --dt-min " + n(s.dt_min) +
         " --dt-max " + n(s.dt_max) + (s.freeze_A ? " --freeze-A" : "");
}

}  // namespace statescope
