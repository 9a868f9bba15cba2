// test_gla.cpp — gated linear attention: the chunked scan against the float64 sequential recurrence
// (outputs, final state, norms and gradients; odd sizes, chunk boundaries, non-zero initial states),
// the model against flash-linear-attention's own GLAForCausalLM (tests/golden/fla-gla*, made by
// make_golden_fla.py with fla's naive recurrence in place of its Triton kernels), two pieces with the
// state handed over equal to one pass, and what its config refuses.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "core/base/error.h"
#include "core/model/checkpoint.h"
#include "core/model/gla/gla_scan.h"
#include "core/model/gla/model.h"
#include "core/model/intervention.h"
#include "core/model/model_config.h"
#include "core/store/h5file.h"
#include "tests/error_text.h"
#include "tests/golden_util.h"
#include "tests/recurrent_checks.h"
#include "tests/scratch.h"
#include "tests/test_util.h"

using namespace statescope;
using namespace statescope::test;

namespace {

struct Inputs {
  torch::Tensor q, k, v, g, h0;
};

// Gates from fast (log decay about -3) to slow (about -0.01) so a chunk's cumulative decay spans
// many orders of magnitude.
Inputs random_inputs(int64_t b, int64_t L, int64_t H, int64_t K, int64_t V, bool with_h0) {
  torch::manual_seed(b * 1000 + L * 10 + K);
  auto o = torch::TensorOptions().dtype(torch::kFloat64);
  Inputs s;
  s.q = torch::randn({b, L, H, K}, o) * 0.5;
  s.k = torch::randn({b, L, H, K}, o);
  s.v = torch::randn({b, L, H, V}, o);
  s.g = torch::nn::functional::logsigmoid(torch::randn({b, L, H, K}, o) * 3.0 + 2.0);
  if (with_h0) s.h0 = torch::randn({b, H, K, V}, o);
  return s;
}

torch::Tensor f32(const torch::Tensor& t) { return t.defined() ? t.to(torch::kFloat32) : t; }

}  // namespace

// The chunked form (float32) equals the float64 recurrence at odd sizes, lengths that end mid-chunk,
// one and zero tokens, chunk sizes that do and do not divide the length, with and without a state.
TEST(GLAScan, ChunkedEqualsTheFloat64Recurrence) {
  for (auto [b, L, H, K, V, chunk] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {2, 37, 3, 5, 7, 16}, {1, 1, 2, 4, 4, 64}, {2, 130, 2, 3, 6, 64}, {1, 70, 1, 8, 5, 7}, {2, 0, 2, 3, 3, 16}}) {
    for (bool h0 : {false, true}) {
      auto s = random_inputs(b, L, H, K, V, h0);
      auto ref = gla_scan_sequential(s.q, s.k, s.v, s.g, s.h0, true);
      auto got = gla_scan_chunked(f32(s.q), f32(s.k), f32(s.v), f32(s.g), f32(s.h0), chunk, true);
      const std::string what = "L=" + std::to_string(L) + " chunk=" + std::to_string(chunk) + (h0 ? " h0" : "");
      EXPECT_EQ(got.o.scalar_type(), torch::kFloat32) << what;
      EXPECT_TRUE(close(got.o, ref.o, 1e-5, what + " o"));
      EXPECT_TRUE(close(got.final_state, ref.final_state, 1e-5, what + " final state"));
      EXPECT_TRUE(close(got.norms, ref.norms, 1e-5, what + " norms"));
      EXPECT_TRUE(close(got.delta_norms, ref.delta_norms, 1e-5, what + " delta norms"));
      // The float64 chunked form is the recurrence to rounding.
      auto exact = gla_scan_chunked(s.q, s.k, s.v, s.g, s.h0, chunk, true);
      EXPECT_TRUE(close(exact.o, ref.o, 1e-12, what + " float64 o"));
    }
  }
}

// Gradients through the chunked form (inputs and the initial state) equal the recurrence's.
TEST(GLAScan, ChunkedGradientsEqualTheRecurrence) {
  auto s = random_inputs(2, 45, 2, 5, 3, true);
  auto grads = [&](bool chunked) {
    std::vector<torch::Tensor> in{s.q.clone().requires_grad_(), s.k.clone().requires_grad_(), s.v.clone().requires_grad_(),
                                  s.g.clone().requires_grad_(), s.h0.clone().requires_grad_()};
    auto out = chunked ? gla_scan_chunked(in[0], in[1], in[2], in[3], in[4], 16, true)
                       : gla_scan_sequential(in[0], in[1], in[2], in[3], in[4], true);
    (out.o.sin().sum() + out.final_state.square().sum() + out.norms.sum()).backward();
    std::vector<torch::Tensor> g;
    for (auto& t : in) g.push_back(t.grad());
    return g;
  };
  auto ref = grads(false), got = grads(true);
  const char* names[] = {"q", "k", "v", "g", "h0"};
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_TRUE(close(got[i], ref[i], 1e-10, std::string("grad ") + names[i]));
}

// The model against fla (recurrent_checks.h): logits, loss, final states and per-position norms from
// the zero state, 70 tokens (its chunk mode), and from random non-zero initial states through its cache.
TEST(GLAGolden, MatchesFlaOnItsOwnCheckpoints) {
  for (const char* dir : {"fla-gla", "fla-gla-plain"}) expect_matches_fla_golden(dir, "gla");
}

// Two pieces with the state handed over (SSM and conv) equal one pass: logits, states, norms; and the
// chunked form's parameter gradients from a non-zero state equal the recurrence's.
TEST(GLAModel, TwoPiecesEqualOnePassAndChunkedTrainsLikeTheRecurrence) {
  RecurrentLM m = load_model_dir(kGolden + "fla-gla", default_compute());
  auto ids = torch::randint(0, 64, {2, 45}, torch::kInt64);
  expect_pieces_equal_one_pass(m, ids, 13, {ScanImpl::Chunked, ScanImpl::Sequential}, /*chunk_size=*/8);
  auto ref = parameter_grads(m, ids, ScanImpl::Sequential, 16), got = parameter_grads(m, ids, ScanImpl::Chunked, 16);
  ASSERT_EQ(ref.size(), got.size());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_TRUE(close(got[i], ref[i], 1e-4, "parameter gradient " + std::to_string(i)));
}

// Saved by statescope, read back: the same numbers; the config round-trips; the parameter count is
// what the model holds; the initialisation is fla's (normal(0, initializer_range), norms 1, bias 0).
TEST(GLAModel, SavesReloadsAndCountsItsParameters) {
  for (const char* dir : {"fla-gla", "fla-gla-plain"}) {
    auto m = load_model_dir(kGolden + dir, default_compute());
    const auto& c = std::get<GLAConfig>(m->model_config());
    auto back = std::get<GLAConfig>(parse_model_config(to_hf_config_json(m->model_config()), "rt.json"));
    EXPECT_EQ(back.mlp_size(), c.mlp_size());
    EXPECT_EQ(back.kv_heads(), c.kv_heads());
    EXPECT_EQ(back.use_short_conv, c.use_short_conv);
    EXPECT_EQ(back.elementwise_affine, c.elementwise_affine);
    EXPECT_EQ(back.tie_embeddings, c.tie_embeddings);
    EXPECT_EQ(back.has_clamp_min, c.has_clamp_min);
    expect_saves_and_reloads(dir);
  }
  GLAConfig c;
  c.d_model = 32, c.num_heads = 2, c.use_short_conv = true;
  GLALM m(c);
  m->reset_parameters(4);
  for (auto& p : m->named_parameters()) {
    const auto& k = p.key();
    if (k.find("norm") != std::string::npos) EXPECT_TRUE(torch::all(p.value() == 1).item<bool>()) << k;
    else if (k.find(".bias") != std::string::npos) EXPECT_TRUE(torch::all(p.value() == 0).item<bool>()) << k;
    else if (p.value().numel() > 200) EXPECT_NEAR(p.value().std().item<double>(), 0.02, 0.004) << k;
  }
  const auto nwd = m->no_weight_decay();
  EXPECT_NE(std::find(nwd.begin(), nwd.end(), "model.layers.0.attn.gk_proj.1.bias"), nwd.end());
  EXPECT_NE(std::find(nwd.begin(), nwd.end(), "model.layers.1.mlp_norm.weight"), nwd.end());
  EXPECT_EQ(std::find(nwd.begin(), nwd.end(), "model.layers.0.attn.q_proj.weight"), nwd.end());
}

// What statescope does not implement is refused naming the option; misfit states name the axes.
TEST(GLAConfig, RefusesWhatItDoesNotImplementByName) {
  auto cfg = [](const std::string& extra) {
    return R"({"model_type": "gla", "hidden_size": 32, "num_hidden_layers": 2, "num_heads": 2, "vocab_size": 64)" + extra +
           "}";
  };
  expect_refused_by_name(cfg, {
           {R"(, "feature_map": "relu")", "feature_map"},
           {R"(, "attn": {"layers": [1], "num_heads": 2})", "attn"},
           {R"(, "hidden_act": "powlu")", "hidden_act"},
           {R"(, "attn_mode": "parallel")", "attn_mode"},
           {R"(, "use_l2warp": true)", "use_l2warp"},
           {R"(, "attnres_block_size": 2)", "attnres_block_size"},
           {R"(, "expand_k": 0.3)", "expand_k"},
           {R"(, "num_kv_heads": 3)", "num_kv_heads"},
           {R"(, "clamp_min": 0.5)", "clamp_min"}});
  EXPECT_NO_THROW(parse_model_config(cfg(R"(, "feature_map": null, "attn": null, "use_gk": true, "attnres_block_size": null)"), "ok.json"));
  const auto unknown = error_of([&] { parse_model_config(R"({"model_type": "retnet"})", "r.json"); });
  EXPECT_NE(unknown.find("\"gla\""), std::string::npos) << unknown;

  expect_misfit_states_refused("fla-gla-plain", {1, 2, 16, 8});
}

// A dt intervention names GLA; a_scale multiplies the log gate; clip bounds each head's norm.
TEST(GLAModel, InterventionsActOnTheGateOrAreRefusedByName) {
  InterventionProbe p("fla-gla");
  p.iv.layers[0].dt_factor = torch::full({4}, 2.0, torch::kFloat64);
  const auto msg = error_of([&] { p.run(); });
  EXPECT_NE(msg.find("GLA has no dt"), std::string::npos) << msg;
  p.iv.layers[0] = LayerIntervention{};
  p.iv.layers[1].a_factor = 0.5;
  auto half = p.run();
  EXPECT_TRUE(close(half.log_decay[1], p.base.log_decay[1] * 0.5, 1e-6, "a_scale halves the log gate"));
  EXPECT_TRUE(close(half.log_decay[0], p.base.log_decay[0], 0, "other layer untouched"));
  expect_clip_bounds_the_norm(p);
}
