// test_nemotron_h.cpp — Nemotron-H whole (core/model/nemotron_h/) against transformers 5.25's
// NemotronHForCausalLM (tests/golden/hf-nemotron-h, tests/golden/make_golden_nemotron_h.py): its
// config.json read, its save_pretrained weights loaded by name, the logits of one pass, the state
// after a first piece (Mamba-2 ssm and conv, attention keys and values) and the second piece's
// logits from transformers' own state and from statescope's. Tolerances: transformers runs the SSD
// scan, the RMSNorms and the router in float32 inside its float64 model, so its outputs are good to
// about 1e-7 relative; statescope computes in float64. Bad configs are refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/checkpoint.h"
#include "core/model/nemotron_h/model.h"
#include "core/store/h5file.h"
#include "tests/error_text.h"
#include "tests/golden_util.h"

using namespace statescope;

namespace {

const std::string kDir = test::kGolden + "hf-nemotron-h/";

torch::Tensor f64(const H5File& f, const std::string& name) {
  std::vector<int64_t> d;
  auto v = f.read_f64(name, &d);
  return torch::from_blob(v.data(), d, torch::kFloat64).clone();
}

nlohmann::json config_json() {
  std::ifstream in(kDir + "config.json");
  return nlohmann::json::parse(in);
}

NemotronHLM load_golden() {
  NemotronHLM m(parse_nemotron_h(config_json(), kDir + "config.json"));
  m->to(torch::kFloat64);
  const StateDict sd = read_weights_file(kDir + "model.safetensors");
  torch::NoGradGuard ng;
  size_t used = 0;
  auto fill = [&](torch::OrderedDict<std::string, torch::Tensor> tensors) {
    for (auto& p : tensors) {
      auto it = sd.find(p.key());
      if (it == sd.end()) throw Error(p.key() + " not in the checkpoint");
      p.value().copy_(it->second);
      ++used;
    }
  };
  fill(m->named_parameters());
  fill(m->named_buffers());
  EXPECT_EQ(used, sd.size()) << "every checkpoint tensor has its place";
  return m;
}

double rel(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
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
  H5File g(kDir + "golden.h5", H5File::Mode::Read);
  auto ids = test::read(g, "input_ids");
  torch::NoGradGuard ng;
  const double whole = rel(m->forward(ids), f64(g, "logits"));
  EXPECT_LT(whole, 1e-5) << "one pass";
  // Piece a (13 tokens) from the empty state: its state is transformers'.
  HybridState s;
  auto la = m->forward(ids.narrow(1, 0, 13), &s);
  ASSERT_EQ(s.recurrent.size(), 2u);
  ASSERT_EQ(s.attention.size(), 1u);
  auto ssm = torch::stack({s.recurrent[0].ssm, s.recurrent[1].ssm});
  auto conv = torch::stack({s.recurrent[0].conv, s.recurrent[1].conv});
  EXPECT_LT(rel(ssm, f64(g, "piece_a_ssm_state")), 1e-5) << "ssm after the first piece";
  // The conv state, keys and values are inputs of their layers: they carry the upstream layers'
  // float32 rounding in transformers.
  EXPECT_LT(rel(conv, f64(g, "piece_a_conv_state")), 1e-5) << "conv after the first piece";
  EXPECT_LT(rel(s.attention[0].keys, f64(g, "piece_a_keys").select(0, 0)), 1e-5);
  EXPECT_LT(rel(s.attention[0].values, f64(g, "piece_a_values").select(0, 0)), 1e-5);
  // Piece b from statescope's state and from transformers' state.
  auto lb = m->forward(ids.narrow(1, 13, 8), &s);
  const double piece = rel(lb, f64(g, "piece_b_logits"));
  EXPECT_LT(piece, 1e-5) << "second piece from statescope's state";
  HybridState hf;
  for (int64_t l = 0; l < 2; ++l)
    hf.recurrent.push_back({f64(g, "piece_a_ssm_state").select(0, l), f64(g, "piece_a_conv_state").select(0, l)});
  hf.attention.push_back({f64(g, "piece_a_keys").select(0, 0), f64(g, "piece_a_values").select(0, 0)});
  EXPECT_LT(rel(m->forward(ids.narrow(1, 13, 8), &hf), f64(g, "piece_b_logits")), 1e-5) << "from transformers' state";
  // statescope's two pieces are its one pass.
  EXPECT_LT(rel(torch::cat({la, lb}, 1), m->forward(ids)), 1e-10);
  std::printf("[ info ] Nemotron-H vs transformers: max |d logits| / max |logits| = %.1e one pass, %.1e second piece\n",
              whole, piece);
}

// From a random non-zero recurrent state (and no keys yet), two pieces equal one pass.
TEST(NemotronH, FromARandomRecurrentStateTwoPiecesAreOnePass) {
  auto m = load_golden();
  torch::NoGradGuard ng;
  auto ids = torch::randint(0, 96, {2, 19});
  HybridState init;
  for (int l = 0; l < 2; ++l)
    init.recurrent.push_back({torch::randn({2, 4, 8, 8}, torch::kFloat64), torch::randn({2, 64, 3}, torch::kFloat64)});
  HybridState s = init;
  auto one = m->forward(ids, &s);
  HybridState p = init;
  auto a = m->forward(ids.narrow(1, 0, 7), &p);
  auto b = m->forward(ids.narrow(1, 7, 12), &p);
  EXPECT_LT(rel(torch::cat({a, b}, 1), one), 1e-10);
  EXPECT_LT(rel(p.recurrent[1].ssm, s.recurrent[1].ssm), 1e-10);
  EXPECT_GT(rel(m->forward(ids), one), 1e-6) << "the initial state matters";
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
