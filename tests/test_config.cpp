// test_config.cpp — both config.json dialects, Infinity, vocab padding, and refusals.
#include <gtest/gtest.h>

#include <cmath>

#include "core/model/mamba2/config.h"
#include "core/base/error.h"

using namespace statescope;

namespace {
// Expects parse_config_json to throw an Error whose message contains every fragment.
void expect_error(const std::string& json, std::initializer_list<const char*> fragments) {
  try {
    parse_config_json(json, "cfg.json");
    FAIL() << "no error for: " << json;
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cfg.json"), std::string::npos) << m;
    for (auto f : fragments) EXPECT_NE(m.find(f), std::string::npos) << "missing '" << f << "' in: " << m;
  }
}
}  // namespace

TEST(Config, HuggingFaceWithInfinity) {
  const auto c = parse_config_json(R"({"model_type": "mamba2", "hidden_size": 768, "num_hidden_layers": 24,
    "vocab_size": 50288, "state_size": 128, "head_dim": 64, "num_heads": 24, "n_groups": 1,
    "expand": 2, "conv_kernel": 4, "time_step_limit": [0.0, Infinity], "tie_word_embeddings": true,
    "name": "not Infinity in a string"})", "cfg.json");
  EXPECT_EQ(c.d_model, 768);
  EXPECT_EQ(c.nheads(), 24);
  EXPECT_EQ(c.conv_dim(), 1536 + 256);
  EXPECT_EQ(c.in_proj_rows(), 2 * 1536 + 2 * 128 + 24);
  EXPECT_EQ(c.vocab_size, 50288);
  EXPECT_TRUE(std::isinf(c.dt_limit_hi));
  EXPECT_FALSE(c.has_dt_limit());
  EXPECT_TRUE(c.norm_per_group);
}

TEST(Config, Transformers5FloatObject) {
  const auto c = parse_config_json(R"({"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2,
    "vocab_size": 256, "head_dim": 16, "n_groups": 2, "time_step_limit": [0.0, {"__float__": "Infinity"}],
    "statescope_norm_per_group": false})", "cfg.json");
  EXPECT_TRUE(std::isinf(c.dt_limit_hi));
  EXPECT_FALSE(c.norm_per_group);
}

TEST(Config, HuggingFaceDefaultsUntiedAndLimit) {
  const auto c = parse_config_json(R"({"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2,
    "vocab_size": 256, "head_dim": 16, "n_groups": 1, "time_step_limit": [0.0, 0.02]})", "cfg.json");
  EXPECT_FALSE(c.tie_embeddings);  // HF default
  EXPECT_TRUE(c.has_dt_limit());
  EXPECT_DOUBLE_EQ(c.dt_limit_hi, 0.02);
}

TEST(Config, MambaSsmPadsVocab) {
  const auto c = parse_config_json(R"({"d_model": 768, "n_layer": 24, "vocab_size": 50277,
    "ssm_cfg": {"layer": "Mamba2"}, "rms_norm": true, "residual_in_fp32": true,
    "pad_vocab_size_multiple": 16, "tie_embeddings": true})", "cfg.json");
  EXPECT_EQ(c.vocab_size, 50288);
  EXPECT_EQ(c.d_state, 128);
  EXPECT_EQ(c.ngroups, 1);
  EXPECT_TRUE(c.tie_embeddings);
  EXPECT_TRUE(c.norm_per_group);
}

TEST(Config, RoundTripThroughHfJson) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 3; c.d_state = 8; c.headdim = 16; c.ngroups = 2; c.vocab_size = 64;
  c.dt_limit_hi = 0.05; c.tie_embeddings = false;
  auto back = parse_config_json(to_hf_config_json(c), "rt.json");
  EXPECT_EQ(back.n_layer, 3);
  EXPECT_EQ(back.ngroups, 2);
  EXPECT_TRUE(back.norm_per_group);
  c.norm_per_group = false;  // transformers 4.x behaviour survives a round trip via the extra field
  EXPECT_FALSE(parse_config_json(to_hf_config_json(c), "rt.json").norm_per_group);
  EXPECT_DOUBLE_EQ(back.dt_limit_hi, 0.05);
  c.dt_limit_hi = INFINITY;
  EXPECT_NE(to_hf_config_json(c).find("Infinity"), std::string::npos);
  EXPECT_TRUE(std::isinf(parse_config_json(to_hf_config_json(c), "rt.json").dt_limit_hi));
}

TEST(Config, Refusals) {
  expect_error("{not json", {"not valid JSON"});
  expect_error(R"({"model_type": "mamba2", "num_hidden_layers": 2, "vocab_size": 10})", {"hidden_size", "missing"});
  // An architecture statescope does not know is named with the ones it knows; a Mamba-1 config (read by
  // parse_model_config, test_mamba1.cpp) is not a Mamba-2 one.
  expect_error(R"({"model_type": "rwkv", "hidden_size": 8})", {"model_type", "\"rwkv\"", "mamba2", "Mamba-1"});
  expect_error(R"({"d_model": 64, "n_layer": 2, "vocab_size": 100, "ssm_cfg": {}})", {"a Mamba-1 config", "Mamba-2"});
  expect_error(R"({"d_model": 64, "n_layer": 2, "vocab_size": 100, "ssm_cfg": {"layer": "Mamba3"}})",
               {"ssm_cfg.layer", "Mamba3"});
  expect_error(R"({"d_model": 64, "n_layer": 2, "vocab_size": 100, "ssm_cfg": {"layer": "Mamba2"},
    "attn_layer_idx": [1]})", {"attn_layer_idx", "attention"});
  expect_error(R"({"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": "two", "vocab_size": 8})",
               {"num_hidden_layers", "integer"});
  expect_error(R"({"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 8,
    "head_dim": 48, "n_groups": 1})", {"headdim"});
  expect_error(R"({"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 8,
    "head_dim": 16, "num_heads": 4, "n_groups": 1})", {"num_heads"});
  expect_error(R"({"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 8,
    "head_dim": 16, "n_groups": 3})", {"ngroups"});
  expect_error(R"({"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 8,
    "head_dim": 16, "n_groups": 1, "time_step_limit": [0.1]})", {"time_step_limit"});
  expect_error(R"([1, 2])", {"JSON object"});
}

TEST(Config, SizesAreLimitedBeforeAnythingIsAllocated) {
  // Each of these made the loader allocate until the OOM killer came (or the allocator failed).
  const std::string base = R"({"model_type": "mamba2", "hidden_size": 64, "head_dim": 16, "n_groups": 1, )";
  expect_error(base + R"("num_hidden_layers": 1000000000, "vocab_size": 8})",
               {"field 'n_layer' is 1000000000, above statescope's limit of 1024"});
  expect_error(base + R"("num_hidden_layers": 2, "vocab_size": 15000000})", {"field 'vocab_size'", "limit of 4194304"});
  expect_error(base + R"("num_hidden_layers": 2, "vocab_size": 8, "state_size": 1000000000})", {"field 'd_state'", "limit"});
  expect_error(R"({"model_type": "mamba2", "hidden_size": 65536, "head_dim": 64, "n_groups": 1, "expand": 16,
    "num_hidden_layers": 1024, "vocab_size": 4194304})", {"parameters, above statescope's limit of 100000000000"});
  // The count the limits use is the model's own (the tiny golden model: 16944 parameters, tied).
  EXPECT_EQ(load_config_file(std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/hf-tied/config.json").parameter_count(),
            16944);
}

// Numbers past the range of a double are refused as JSON errors naming the file (nlohmann throws
// out_of_range for them, not parse_error; found by fuzzing).
TEST(Config, NumbersTooLargeForADoubleAreAJsonError) {
  expect_error(R"({"model_type": "mamba2", "hidden_size": 3e477})", {"not valid JSON", "3e477"});
}

