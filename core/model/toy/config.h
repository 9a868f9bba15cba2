// toy/config.h — a toy architecture (issue 51's proof by addition; removed after the count): a
// diagonal linear recurrence per channel, h_t = a * h_{t-1} + (1 - a) * W_in u_t, y_t = W_out h_t,
// a = sigmoid(a_logit). config.json: model_type "toy_diag". No LibTorch.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace statescope {

struct ToyConfig {
  int64_t d_model = 32;   // [hidden_size]; the state has d_model channels per layer
  int64_t n_layer = 2;    // [num_hidden_layers]
  int64_t vocab_size = 256;
  double norm_eps = 1e-5;
  bool tie_embeddings = true;
  bool residual_in_fp32 = true;

  int64_t parameter_count() const { return vocab_size * d_model + n_layer * (2 * d_model * d_model + 2 * d_model) + d_model; }
  void validate(const std::string& source) const;
};

ToyConfig parse_toy_hf(const nlohmann::json& j, const std::string& source);
std::string to_hf_config_json(const ToyConfig& cfg);

}  // namespace statescope
