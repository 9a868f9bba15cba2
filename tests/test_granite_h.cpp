// test_granite_h.cpp — Granite 4.0-H whole (core/model/granite_h/) against transformers 5.25's
// GraniteMoeHybridForCausalLM (tests/golden/hf-granite-h: Mamba-2 and RoPE attention, experts beside
// the shared MLP, tied head; hf-granite-h-dense: NoPE attention with biases, no experts, untied; both
// with muP multipliers; tests/golden/make_golden_hybrids.py; the checks in tests/hybrid_golden.h, to
// 1e-5: transformers runs the SSD scan, the RMSNorms and the router in float32 inside its float64
// model); its config.json read; bad configs refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/granite_h/model.h"
#include "tests/error_text.h"
#include "tests/hybrid_golden.h"

using namespace statescope;

namespace {

using test::rel;

GraniteHLM load_golden(const std::string& dir) {
  GraniteHLM m(parse_granite_h(test::golden_config(dir), dir + "/config.json"));
  test::load_golden_weights(m, dir);
  return m;
}

}  // namespace

TEST(GraniteH, ReadsItsConfigAndMatchesTransformersWholeAndInPieces) {
  const auto cfg = parse_granite_h(test::golden_config("hf-granite-h"), "config.json");
  EXPECT_EQ(cfg.layers, (std::vector<LayerKind>{LayerKind::Mamba2, LayerKind::Attention, LayerKind::Mamba2}));
  EXPECT_EQ(cfg.head_dim(), 12) << "hidden_size / num_attention_heads";
  EXPECT_EQ(cfg.rope_theta, 1e4);
  EXPECT_EQ(cfg.experts, 4);
  EXPECT_TRUE(cfg.tie_embeddings);
  EXPECT_EQ(cfg.logits_scaling, 2.5);
  auto m = load_golden("hf-granite-h");
  EXPECT_EQ(m->output_weight().data_ptr(), m->embed->weight.data_ptr()) << "the tied head is the embedding";
  test::check_against_transformers(m, "hf-granite-h", 1e-5);
  const auto dense = parse_granite_h(test::golden_config("hf-granite-h-dense"), "config.json");
  EXPECT_EQ(dense.rope_theta, 0) << "position_embedding_type null: NoPE";
  EXPECT_EQ(dense.experts, 0);
  auto d = load_golden("hf-granite-h-dense");
  EXPECT_FALSE(d->moes[0]) << "no experts: the shared MLP alone";
  test::check_against_transformers(d, "hf-granite-h-dense", 1e-5);
}

// Each multiplier matters: the fixture's logits move when one is put back to 1.
TEST(GraniteH, EveryMultiplierActs) {
  H5File g(test::kGolden + "hf-granite-h/golden.h5", H5File::Mode::Read);
  const auto ids = test::read(g, "input_ids");
  const auto want = test::f64(g, "logits");
  torch::NoGradGuard ng;
  for (const char* field : {"embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling"}) {
    auto j = test::golden_config("hf-granite-h");
    j[field] = 1.0;
    GraniteHLM m(parse_granite_h(j, "c.json"));
    test::load_golden_weights(m, "hf-granite-h");
    EXPECT_GT(rel(test::pass(m, ids), want), 1e-3) << field << " at 1 changes nothing";
  }
}

// From a random non-zero recurrent state (and no keys yet), two pieces equal one pass.
TEST(GraniteH, FromARandomRecurrentStateTwoPiecesAreOnePass) {
  auto m = load_golden("hf-granite-h");
  torch::NoGradGuard ng;
  torch::manual_seed(12);
  auto ids = torch::randint(0, 96, {2, 19});
  ModelState init;
  for (int l = 0; l < 2; ++l)
    init.push_back({torch::randn({2, 8, 12, 8}, torch::kFloat64), torch::randn({2, m->mamba.conv_dim(), 3}, torch::kFloat64)});
  test::expect_pieces_from_state(m, ids, init, 1e-7);
}

TEST(GraniteH, ConfigsItCannotHonourAreRefusedByName) {
  auto why = [](const std::function<void(nlohmann::json&)>& edit) {
    auto j = test::golden_config("hf-granite-h");
    edit(j);
    return test::error_of([&] { parse_granite_h(j, "c.json"); });
  };
  EXPECT_NE(why([](auto& j) { j["layer_types"] = {"linear_attention", "sliding_attention", "linear_attention"}; }).find("sliding_attention"),
            std::string::npos);
  EXPECT_NE(why([](auto& j) { j["hidden_act"] = "gelu"; }).find("field 'hidden_act'"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["attention_dropout"] = 0.1; }).find("field 'attention_dropout'"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["rope_parameters"]["rope_type"] = "yarn"; }).find("rope_parameters.rope_type"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["num_key_value_heads"] = 3; }).find("num_key_value_heads"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["num_hidden_layers"] = 4; }).find("num_hidden_layers"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["mamba_d_head"] = 16; }).find("mamba_d_head"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["logits_scaling"] = 0; }).find("logits_scaling"), std::string::npos);
  // transformers' legacy names and "auto" head size read as it reads them.
  auto legacy = test::golden_config("hf-granite-h");
  legacy["layer_types"] = {"mamba", "attention", "mamba"};
  legacy["mamba_d_head"] = "auto";
  const auto a = parse_granite_h(legacy, "c.json"), b = parse_granite_h(test::golden_config("hf-granite-h"), "c.json");
  EXPECT_EQ(a.layers, b.layers);
  EXPECT_EQ(a.mamba_head_dim, b.mamba_head_dim);
}
