// test_nemotron_h.cpp — Nemotron-H whole (core/model/nemotron_h/) against transformers 5.25's
// NemotronHForCausalLM (tests/golden/hf-nemotron-h, tests/golden/make_golden_hybrids.py; the checks
// in tests/hybrid_golden.h, to 1e-5: transformers runs the SSD scan, the RMSNorms and the router in
// float32 inside its float64 model); its config.json read; bad configs refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/nemotron_h/model.h"
#include "tests/error_text.h"
#include "tests/hybrid_golden.h"

using namespace statescope;

namespace {

using test::rel;

nlohmann::json config_json() { return test::golden_config("hf-nemotron-h"); }

NemotronHLM load_golden() {
  NemotronHLM m(parse_nemotron_h(config_json(), "hf-nemotron-h/config.json"));
  test::load_golden_weights(m, "hf-nemotron-h");
  return m;
}

}  // namespace

TEST(NemotronH, ReadsItsConfigAndMatchesTransformersWholeAndInPieces) {
  const auto cfg = parse_nemotron_h(config_json(), "config.json");
  ASSERT_EQ(cfg.layers.size(), 5u);
  EXPECT_EQ(cfg.layers[0], LayerKind::Mamba2);
  EXPECT_EQ(cfg.layers[1], LayerKind::Mlp);
  EXPECT_EQ(cfg.layers[2], LayerKind::Attention);
  EXPECT_EQ(cfg.layers[3], LayerKind::Moe);
  auto m = load_golden();
  EXPECT_EQ(m->mamba.d_inner(), 32) << "mamba_num_heads x mamba_head_dim, not expand x hidden";
  test::check_against_transformers(m, "hf-nemotron-h", 1e-5);
}

// From a random non-zero recurrent state (and no keys yet), two pieces equal one pass: to 1e-7, since
// the router scores in float32 as transformers does, and a token's float32 matmul rounds differently
// among other tokens (seen: 2e-8 of the logits' scale; the recurrent path alone is float64).
TEST(NemotronH, FromARandomRecurrentStateTwoPiecesAreOnePass) {
  auto m = load_golden();
  torch::NoGradGuard ng;
  torch::manual_seed(11);
  auto ids = torch::randint(0, 96, {2, 19});
  ModelState init;
  for (int l = 0; l < 2; ++l) init.push_back({torch::randn({2, 4, 8, 8}, torch::kFloat64), torch::randn({2, 64, 3}, torch::kFloat64)});
  test::expect_pieces_from_state(m, ids, init, 1e-7);
}

TEST(NemotronH, ConfigsItCannotHonourAreRefusedByName) {
  auto why = [](const std::function<void(nlohmann::json&)>& edit) {
    auto j = config_json();
    edit(j);
    return test::error_of([&] { parse_nemotron_h(j, "c.json"); });
  };
  EXPECT_NE(why([](auto& j) { j["layers_block_type"] = {"linear_attention", "sliding_attention"}; }).find("sliding_attention"),
            std::string::npos);
  EXPECT_NE(why([](auto& j) { j["mlp_hidden_act"] = "gelu"; }).find("field 'mlp_hidden_act'"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["mlp_bias"] = true; }).find("field 'mlp_bias'"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j.erase("layers_block_type"); }).find("layers_block_type"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["num_key_value_heads"] = 3; }).find("num_key_value_heads"), std::string::npos);
  auto legacy = config_json();
  legacy.erase("layers_block_type");
  legacy["hybrid_override_pattern"] = "M-*EM";
  EXPECT_EQ(parse_nemotron_h(legacy, "c.json").layers, parse_nemotron_h(config_json(), "c.json").layers);
}
