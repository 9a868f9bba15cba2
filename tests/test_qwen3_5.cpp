// test_qwen3_5.cpp — Qwen3.5 (text) whole (core/model/qwen3_5/) against transformers 5.25's
// Qwen3_5ForCausalLM (tests/golden/hf-qwen3-5, tests/golden/make_golden_hybrids.py; the checks in
// tests/hybrid_golden.h, to 1e-5: transformers runs the delta rule and the norms in float32 inside its
// float64 model): its config.json read (the layer kinds, the multimodal text_config), the checkpoint's
// fused Gated DeltaNet tensors renamed into statescope's layer; bad configs refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/qwen3_5/model.h"
#include "tests/error_text.h"
#include "tests/hybrid_golden.h"

using namespace statescope;

namespace {
const std::string kDir = "hf-qwen3-5";
}  // namespace

TEST(Qwen35, ReadsItsConfigAndMatchesTransformersWholeAndInPieces) {
  const auto cfg = parse_qwen3_5(test::golden_config(kDir), "config.json");
  ASSERT_EQ(cfg.layers.size(), 3u);
  EXPECT_EQ(cfg.layers[0], LayerKind::GatedDeltaNet);
  EXPECT_EQ(cfg.layers[1], LayerKind::Attention);
  EXPECT_DOUBLE_EQ(cfg.partial_rotary, 0.25);
  Qwen35LM m(cfg);
  test::load_golden_weights(m, kDir);
  test::check_against_transformers(m, kDir, 1e-5);
}

// A multimodal checkpoint's config holds the text model in text_config and its weights under
// model.language_model.*; the vision tower's are left out.
TEST(Qwen35, TheMultimodalWrapperIsReadForItsTextModel) {
  nlohmann::json mm{{"model_type", "qwen3_5"}, {"text_config", test::golden_config(kDir)}, {"tie_word_embeddings", false}};
  const auto cfg = parse_qwen3_5(mm, "mm.json");
  EXPECT_TRUE(cfg.multimodal);
  EXPECT_EQ(cfg.layers.size(), 3u);
  StateDict disk{{"model.language_model.norm.weight", torch::zeros({48})}, {"model.visual.blocks.0.attn.qkv.weight", torch::zeros({3})},
                 {"lm_head.weight", torch::zeros({96, 48})}};
  const auto w = qwen3_5_weights(disk, cfg, "mm");
  EXPECT_EQ(w.count("model.norm.weight"), 1u);
  EXPECT_EQ(w.count("lm_head.weight"), 1u);
  EXPECT_EQ(w.size(), 2u) << "the vision tower is not read";
}

TEST(Qwen35, ConfigsItCannotHonourAreRefusedByName) {
  auto why = [](const std::function<void(nlohmann::json&)>& edit) {
    auto j = test::golden_config(kDir);
    edit(j);
    return test::error_of([&] { parse_qwen3_5(j, "c.json"); });
  };
  EXPECT_NE(why([](auto& j) { j["layer_types"][1] = "sliding_attention"; }).find("sliding_attention"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["layer_types"].push_back("full_attention"); }).find("num_hidden_layers 3"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["rope_parameters"]["rope_type"] = "yarn"; }).find("rope_parameters.rope_type"),
            std::string::npos);
  EXPECT_NE(why([](auto& j) { j["linear_num_value_heads"] = 3; }).find("linear_num_value_heads"), std::string::npos);
  EXPECT_NE(why([](auto& j) { j["hidden_act"] = "gelu"; }).find("field 'hidden_act'"), std::string::npos);
  auto j = test::golden_config(kDir);
  j.erase("layer_types");
  j["num_hidden_layers"] = 8;
  const auto d = parse_qwen3_5(j, "c.json");  // transformers' default: every 4th layer is attention
  EXPECT_EQ(d.layers[3], LayerKind::Attention);
  EXPECT_EQ(d.layers[7], LayerKind::Attention);
  EXPECT_EQ(d.layers[4], LayerKind::GatedDeltaNet);
}
