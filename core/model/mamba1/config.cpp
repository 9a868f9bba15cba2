// mamba1/config.cpp — both config.json dialects into Mamba1Config.
#include "core/model/mamba1/config.h"
#include "core/model/mamba1/arch.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/mamba2/config.h"  // Mamba2Config's limits, shared
#include "core/model/config_json.h"
#include "core/model/pretrain_shape.h"

namespace statescope {

using nlohmann::json;

int64_t Mamba1Config::parameter_count() const {
  const int64_t D = d_model, V = vocab_size, DI = d_inner(), N = d_state, R = rank();
  const int64_t per_layer = D                                              // norm
                            + 2 * DI * D + (proj_bias ? 2 * DI : 0)        // in_proj
                            + DI * d_conv + (conv_bias ? DI : 0)           // conv1d
                            + x_proj_rows() * DI                           // x_proj
                            + DI * R + DI                                  // dt_proj (with bias)
                            + DI * N + DI                                  // A_log, D
                            + D * DI + (proj_bias ? D : 0);                // out_proj
  return V * D * (tie_embeddings ? 1 : 2) + n_layer * per_layer + D;
}

void Mamba1Config::validate(const std::string& source) const {
  // Limits well above every published Mamba-1 (2.8B: d_model 2560, 64 layers, d_state 16).
  require_size(d_model, Mamba2Config::kMaxDModel, source, "d_model");
  require_size(n_layer, Mamba2Config::kMaxLayers, source, "n_layer");
  require_size(d_state, Mamba2Config::kMaxDState, source, "d_state");
  require_size(expand, 16, source, "expand");
  require_size(d_conv, 64, source, "d_conv");
  require_size(rank(), Mamba2Config::kMaxDModel, source, "dt_rank");
  require_size(vocab_size, Mamba2Config::kMaxVocab, source, "vocab_size");
  if (parameter_count() > Mamba2Config::kMaxParameters)
    throw Error(source + ": describes " + std::to_string(parameter_count()) +
                " parameters, above statescope's limit of " + std::to_string(Mamba2Config::kMaxParameters));
  if (!(norm_eps > 0 && norm_eps <= 1))  // finite: Infinity would zero every logit
    throw Error(source + ": field 'norm_eps' must be in (0, 1], got " + std::to_string(norm_eps));
}

namespace {

// time_step_rank / dt_rank: an integer or "auto".
int64_t read_rank(const ConfigReader& r, const char* key) {
  if (!r.has(key)) return 0;
  if (r.obj[key].is_string()) {
    if (r.obj[key] == "auto") return 0;
    throw Error(r.source + ": field '" + r.prefix + key + "' must be an integer or \"auto\", got " + r.obj[key].dump());
  }
  const int64_t v = r.req_int(key);
  if (v <= 0) throw Error(r.source + ": field '" + r.prefix + key + "' must be positive, got " + std::to_string(v));
  return v;
}

}  // namespace

Mamba1Config parse_mamba1_hf(const json& j, const std::string& source) {
  ConfigReader r{j, source, ""};
  Mamba1Config c;
  read_hf_common(r, c, /*default_d_state=*/16, /*default_tied=*/true);  // transformers' MambaConfig defaults
  c.dt_rank = read_rank(r, "time_step_rank");
  c.dt_scale = r.opt_num("time_step_scale", 1.0);
  if (r.has("intermediate_size") && r.req_int("intermediate_size") != c.d_inner())
    throw Error(source + ": field 'intermediate_size' (" + std::to_string(r.req_int("intermediate_size")) +
                ") must equal expand*hidden_size (" + std::to_string(c.d_inner()) + ")");
  return c;
}

Mamba1Config parse_mamba1_mamba_ssm(const json& j, const std::string& source) {
  ConfigReader r{j, source, ""};
  Mamba1Config c;
  c.d_model = r.req_int("d_model");
  c.n_layer = r.req_int("n_layer");
  const int64_t raw_vocab = r.req_int("vocab_size");
  c.pad_vocab_size_multiple = r.opt_int("pad_vocab_size_multiple", 8);
  if (c.pad_vocab_size_multiple < 1) throw Error(source + ": field 'pad_vocab_size_multiple' must be >= 1");
  const int64_t m = c.pad_vocab_size_multiple;
  c.vocab_size = (raw_vocab + m - 1) / m * m;
  c.tie_embeddings = r.opt_bool("tie_embeddings", true);
  c.residual_in_fp32 = r.opt_bool("residual_in_fp32", true);
  if (!r.opt_bool("rms_norm", true))
    throw Error(source + ": field 'rms_norm' is false; only RMSNorm Mamba-1 models are supported");
  if (r.opt_int("d_intermediate", 0) != 0)
    throw Error(source + ": field 'd_intermediate' is non-zero (MLP blocks); not supported");
  if (r.has("attn_layer_idx") && !j["attn_layer_idx"].empty())
    throw Error(source + ": field 'attn_layer_idx' is not empty: hybrid models with attention layers are not supported");
  const json empty = json::object();
  const json& s = r.has("ssm_cfg") ? j["ssm_cfg"] : empty;
  if (!s.is_object()) throw Error(source + ": field 'ssm_cfg' must be an object, got " + s.dump());
  ConfigReader rs{s, source, "ssm_cfg."};
  // mamba_ssm's Mamba() defaults.
  c.d_state = rs.opt_int("d_state", 16);
  c.d_conv = rs.opt_int("d_conv", 4);
  c.expand = rs.opt_int("expand", 2);
  c.dt_rank = read_rank(rs, "dt_rank");
  c.conv_bias = rs.opt_bool("conv_bias", true);
  c.proj_bias = rs.opt_bool("bias", false);
  c.dt_min = rs.opt_num("dt_min", 0.001);
  c.dt_max = rs.opt_num("dt_max", 0.1);
  c.dt_init_floor = rs.opt_num("dt_init_floor", 1e-4);
  c.dt_scale = rs.opt_num("dt_scale", 1.0);
  return c;
}

std::string to_hf_config_json(const Mamba1Config& c) {
  json j;
  write_hf_common(j, c);
  j["architectures"] = {"MambaForCausalLM"};
  j["model_type"] = "mamba";
  j["intermediate_size"] = c.d_inner();
  j["time_step_rank"] = c.rank();
  j["time_step_scale"] = c.dt_scale;
  return dump_with_infinity(j);
}

// The registration's layout and description (arch.h).
StateLayout Arch<Mamba1Config>::layout(const Mamba1Config& m) {
  StateLayout l;
  l.n_layer = m.n_layer;
  l.ssm = {{"d_inner", m.d_inner()}, {"d_state", m.d_state}};
  l.conv = {{"d_inner", m.d_inner()}, {"d_conv-1", m.d_conv - 1}};
  l.groups = channel_groups(m.d_inner());
  l.group_name = "channel group";
  return l;
}

Description Arch<Mamba1Config>::describe(const Mamba1Config& m) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return {{"d_state", n(m.d_state)}, {"d_inner", n(m.d_inner())}, {"dt_rank", n(m.rank())},
          {"d_conv", n(m.d_conv)}};
}

Mamba1Config Arch<Mamba1Config>::from_pretrain(const PretrainShape& s) {
  Mamba1Config m;
  m.d_model = s.d_model, m.n_layer = s.n_layer, m.d_state = s.d_state, m.expand = s.expand, m.d_conv = s.d_conv;
  m.dt_rank = s.dt_rank, m.vocab_size = 256, m.tie_embeddings = true;
  m.dt_min = s.dt_min, m.dt_max = s.dt_max, m.dt_init_floor = std::min(m.dt_init_floor, s.dt_min);
  return m;
}

std::string Arch<Mamba1Config>::pretrain_flags(const PretrainShape& s) {
  return " --d-state " + std::to_string(s.d_state) + " --expand " + std::to_string(s.expand) + " --dt-rank " +
         std::to_string(s.dt_rank) + " --dt-min " + pretrain_number(s.dt_min) + " --dt-max " +
         pretrain_number(s.dt_max) + (s.freeze_A ? " --freeze-A" : "");
}

}  // namespace statescope
