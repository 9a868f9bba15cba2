// pretrain_shape.cpp — a fresh model's shape read, checked and made a config (pretrain_shape.h). No
// LibTorch.
#include "core/model/pretrain_shape.h"

#include <algorithm>
#include <optional>

#include "core/base/error.h"
#include "core/base/json_fields.h"
#include "core/model/model_config.h"

namespace statescope {

const std::vector<std::string>& shape_keys() {
  static const std::vector<std::string> k{"arch", "d_model", "n_layer", "d_state", "expand", "d_conv", "headdim", "ngroups",
                                          "chunk_size", "dt_rank", "dt_min", "dt_max", "dt_limit", "a_min", "a_max",
                                          "freeze_A", "num_heads", "expand_k", "expand_v", "short_conv", "clamp_min",
                                          "mlp_size", "head_dim", "v_heads", "no_short_conv", "layers", "attention_heads",
                                          "kv_heads", "attention_head_dim"};
  return k;
}

// The architecture named by `arch` reads its own fields (Arch<Config>::from_pretrain, in its folder).
ModelConfig shape_config(const PretrainShape& s, const std::string& where) {
  std::optional<ModelConfig> c;
  for_each_architecture([&](auto t) {
    using A = Arch<typename decltype(t)::type>;
    if (!c && s.arch == A::names.key) {
      auto x = A::from_pretrain(s);
      x.validate(where);
      c = x;
    }
  });
  if (!c) throw Error(where + ": field 'arch' must be one of " + known_architectures() + ", got \"" + s.arch + "\"");
  return *c;
}

bool PretrainField::owned_by(const std::string& a) const { return std::find(archs.begin(), archs.end(), a) != archs.end(); }

const std::vector<PretrainField>& pretrain_fields() {
  static const std::vector<std::string> m2{"mamba2", "nemotron_h", "granite_h"}, m1{"mamba1"},
      mamba{"mamba2", "mamba1", "nemotron_h", "granite_h"}, mamba_init{"mamba2", "mamba1"}, gla{"gla"},
      gdn{"gated_deltanet", "qwen3_5"}, fla{"gla", "gated_deltanet", "qwen3_5"},
      a_range{"mamba2", "gated_deltanet", "nemotron_h", "qwen3_5", "granite_h"}, a_log{"mamba2", "mamba1", "gated_deltanet"},
      mlp{"gla", "gated_deltanet", "nemotron_h", "qwen3_5", "granite_h"}, hybrid{"nemotron_h", "qwen3_5", "granite_h"};
  static const std::vector<PretrainField> f{
      {"headdim", "--headdim", "Mamba-2", m2},
      {"ngroups", "--ngroups", "Mamba-2", m2},
      {"chunk_size", "--chunk-size", "Mamba-2", m2},
      {"dt_limit", "--dt-limit", "Mamba-2", m2},
      {"a_min", "--a-min", "Mamba-2, Gated DeltaNet and the hybrids", a_range},
      {"a_max", "--a-max", "Mamba-2, Gated DeltaNet and the hybrids", a_range},
      {"dt_rank", "--dt-rank", "Mamba-1", m1},
      {"d_state", "--d-state", "Mamba", mamba},
      {"expand", "--expand", "Mamba", mamba},
      {"dt_min", "--dt-min", "Mamba", mamba_init},
      {"dt_max", "--dt-max", "Mamba", mamba_init},
      {"freeze_A", "--freeze-A", "Mamba and Gated DeltaNet", a_log},
      {"num_heads", "--heads", "GLA and Gated DeltaNet", fla},
      {"expand_v", "--expand-v", "GLA and Gated DeltaNet", fla},
      {"mlp_size", "--mlp-size", "GLA, Gated DeltaNet and the hybrids", mlp},
      {"expand_k", "--expand-k", "GLA", gla},
      {"short_conv", "--short-conv", "GLA", gla},
      {"clamp_min", "--clamp-min", "GLA", gla},
      {"head_dim", "--head-dim", "Gated DeltaNet", gdn},
      {"v_heads", "--v-heads", "Gated DeltaNet", gdn},
      {"no_short_conv", "--no-short-conv", "Gated DeltaNet", {"gated_deltanet"}},
      {"layers", "--layers", "hybrid", hybrid},
      {"attention_heads", "--attention-heads", "hybrid", hybrid},
      {"kv_heads", "--kv-heads", "hybrid", hybrid},
      {"attention_head_dim", "--attention-head-dim", "hybrid", hybrid},
  };
  return f;
}

void read_shape(const JsonFields& f, PretrainShape& p) {
  f.read("arch", p.arch);
  if (!is_architecture(p.arch)) f.fail("arch", "must be one of " + known_architectures() + ", got \"" + p.arch + "\"");
  // A field of another architecture is named, never ignored.
  for (const auto& field : pretrain_fields())
    if (!field.owned_by(p.arch) && f.has(field.spec))
      f.fail(field.spec, std::string("is a ") + field.whose + " setting; arch \"" + p.arch + "\" has none");
  f.read("d_model", p.d_model);
  f.read("n_layer", p.n_layer);
  f.read("d_state", p.d_state);
  f.read("expand", p.expand);
  f.read("d_conv", p.d_conv);
  f.read("headdim", p.headdim);
  f.read("ngroups", p.ngroups);
  f.read("chunk_size", p.chunk_size);
  f.read("dt_rank", p.dt_rank);
  f.read("dt_min", p.dt_min);
  f.read("dt_max", p.dt_max);
  f.read("dt_limit", p.dt_limit);
  f.read("a_min", p.a_min);
  f.read("a_max", p.a_max);
  f.read("freeze_A", p.freeze_A);
  f.read("num_heads", p.num_heads);
  f.read("expand_k", p.expand_k);
  f.read("expand_v", p.expand_v);
  f.read("short_conv", p.short_conv);
  f.read("mlp_size", p.mlp_size);
  f.read("clamp_min", p.clamp_min);
  f.read("head_dim", p.head_dim);
  f.read("v_heads", p.v_heads);
  f.read("no_short_conv", p.no_short_conv);
  p.expand_v_set = f.has("expand_v");
  f.read("layers", p.layers);
  f.read("attention_heads", p.attention_heads);
  f.read("kv_heads", p.kv_heads);
  f.read("attention_head_dim", p.attention_head_dim);
}

void check_shape(const PretrainShape& s, const std::string& where, const std::string& prefix) {
  const auto num = pretrain_number;
  auto fail = [&](const char* field, const std::string& why) {
    throw Error(where + ": field '" + prefix + field + "' " + why);
  };
  if (!(s.dt_min > 0 && s.dt_max >= s.dt_min && s.dt_max <= 1e3))
    fail("dt_min", "and dt_max need 0 < dt_min <= dt_max <= 1000, got " + num(s.dt_min) + " and " + num(s.dt_max));
  if (!(s.dt_limit >= 0 && s.dt_limit <= 1e3)) fail("dt_limit", "needs 0 <= dt_limit <= 1000 (0: none), got " + num(s.dt_limit));
  if (!(s.a_min > 0 && s.a_max >= s.a_min && s.a_max <= 1e4))
    fail("a_min", "and a_max need 0 < a_min <= a_max <= 10000, got " + num(s.a_min) + " and " + num(s.a_max));
  if (s.dt_rank < 0) fail("dt_rank", "needs 0 (auto) or a positive rank, got " + std::to_string(s.dt_rank));
  if (!(s.clamp_min <= 0 && s.clamp_min >= -100)) fail("clamp_min", "needs a log-gate floor in [-100, 0] (0: none), got " + num(s.clamp_min));
  if (s.mlp_size < 0) fail("mlp_size", "needs 0 (fla's default) or a positive width, got " + std::to_string(s.mlp_size));
  if (s.v_heads < 0) fail("v_heads", "needs 0 (as num_heads) or a positive count, got " + std::to_string(s.v_heads));
}

}  // namespace statescope
