// toy/config.cpp — the toy architecture's config.json, layout and description (config.h).
#include "core/model/toy/config.h"
#include "core/model/toy/arch.h"

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/config_json.h"
#include "core/model/pretrain_shape.h"

namespace statescope {

void ToyConfig::validate(const std::string& source) const {
  require_size(d_model, 1 << 14, source, "hidden_size");
  require_size(n_layer, 256, source, "num_hidden_layers");
  require_size(vocab_size, 1 << 20, source, "vocab_size");
  if (!(norm_eps > 0 && norm_eps <= 1)) throw Error(source + ": field 'rms_norm_eps' must be in (0, 1]");
}

ToyConfig parse_toy_hf(const nlohmann::json& j, const std::string& source) {
  ConfigReader r{j, source, ""};
  ToyConfig c;
  c.d_model = r.req_int("hidden_size");
  c.n_layer = r.req_int("num_hidden_layers");
  c.vocab_size = r.req_int("vocab_size");
  c.norm_eps = r.opt_num("rms_norm_eps", 1e-5);
  c.tie_embeddings = r.opt_bool("tie_word_embeddings", true);
  return c;
}

std::string to_hf_config_json(const ToyConfig& c) {
  nlohmann::json j{{"model_type", "toy_diag"}, {"hidden_size", c.d_model}, {"num_hidden_layers", c.n_layer},
                   {"vocab_size", c.vocab_size}, {"rms_norm_eps", c.norm_eps}, {"tie_word_embeddings", c.tie_embeddings}};
  return j.dump(2);
}

StateLayout Arch<ToyConfig>::layout(const ToyConfig& m) {
  StateLayout l;
  l.n_layer = m.n_layer;
  l.ssm = {{"channels", m.d_model}};
  l.groups = 1;
  l.group_name = "layer";
  return l;
}

Description Arch<ToyConfig>::describe(const ToyConfig&) { return {}; }

ToyConfig Arch<ToyConfig>::from_pretrain(const PretrainShape& s) {
  ToyConfig c;
  c.d_model = s.d_model, c.n_layer = s.n_layer;
  return c;
}

std::string Arch<ToyConfig>::pretrain_flags(const PretrainShape&) { return ""; }

}  // namespace statescope
