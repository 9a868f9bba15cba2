// test_gdn.cpp — Gated DeltaNet: the chunked delta rule against the float64 sequential recurrence
// (outputs, final state, norms and gradients; odd sizes, chunk boundaries, non-zero initial states,
// beta up to 2), the model against flash-linear-attention's own GatedDeltaNetForCausalLM
// (tests/golden/fla-gdn*, made by make_golden_gdn.py with fla's naive recurrence in place of its
// Triton kernels), two pieces with the state handed over equal to one pass, what the delta rule does
// to the state's norm, and what its config refuses.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/checkpoint.h"
#include "core/model/gdn/delta_scan.h"
#include "core/model/gdn/model.h"
#include "core/model/gla/gla_scan.h"
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
  torch::Tensor q, k, v, g, beta, h0;
};

// As the model feeds the scan: q and k unit per head (q scaled), log decays from fast (about -3) to
// slow (about -0.001), beta in (0, beta_max).
Inputs random_inputs(int64_t b, int64_t L, int64_t H, int64_t K, int64_t V, bool with_h0, double beta_max = 1.0) {
  torch::manual_seed(b * 1000 + L * 10 + K);
  auto o = torch::TensorOptions().dtype(torch::kFloat64);
  auto unit = [](const torch::Tensor& x) { return x / x.norm(2, -1, true); };
  Inputs s;
  s.q = unit(torch::randn({b, L, H, K}, o)) / std::sqrt(static_cast<double>(K));
  s.k = unit(torch::randn({b, L, H, K}, o));
  s.v = torch::randn({b, L, H, V}, o);
  s.g = -torch::exp(torch::randn({b, L, H}, o) * 2.0 - 2.0);
  s.beta = torch::sigmoid(torch::randn({b, L, H}, o) * 2.0) * beta_max;
  if (with_h0) s.h0 = torch::randn({b, H, K, V}, o);
  return s;
}

torch::Tensor f32(const torch::Tensor& t) { return t.defined() ? t.to(torch::kFloat32) : t; }

const char* kFixtures[] = {"fla-gdn", "fla-gdn-plain", "fla-gdn-sigmoid"};

}  // namespace

// The chunked form (float32) equals the float64 recurrence at odd sizes, lengths that end mid-chunk,
// one and zero tokens, chunk sizes that do and do not divide the length, with and without a state,
// and with beta up to 2 (allow_neg_eigval).
TEST(DeltaScan, ChunkedEqualsTheFloat64Recurrence) {
  for (auto [b, L, H, K, V, chunk] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {2, 37, 3, 5, 7, 16}, {1, 1, 2, 4, 4, 64}, {2, 130, 2, 3, 6, 64}, {1, 70, 1, 8, 5, 7}, {2, 0, 2, 3, 3, 16}}) {
    for (bool h0 : {false, true})
      for (double beta_max : {1.0, 2.0}) {
        auto s = random_inputs(b, L, H, K, V, h0, beta_max);
        auto ref = delta_scan_sequential(s.q, s.k, s.v, s.g, s.beta, s.h0, true);
        auto got = delta_scan_chunked(f32(s.q), f32(s.k), f32(s.v), f32(s.g), f32(s.beta), f32(s.h0), chunk, true);
        const std::string what = "L=" + std::to_string(L) + " chunk=" + std::to_string(chunk) + (h0 ? " h0" : "") +
                                 " beta<" + std::to_string(beta_max);
        EXPECT_EQ(got.o.scalar_type(), torch::kFloat32) << what;
        EXPECT_TRUE(close(got.o, ref.o, 1e-4, what + " o"));
        EXPECT_TRUE(close(got.final_state, ref.final_state, 1e-4, what + " final state"));
        EXPECT_TRUE(close(got.norms, ref.norms, 1e-4, what + " norms"));
        EXPECT_TRUE(close(got.delta_norms, ref.delta_norms, 1e-4, what + " delta norms"));
        auto exact = delta_scan_chunked(s.q, s.k, s.v, s.g, s.beta, s.h0, chunk, true);
        EXPECT_TRUE(close(exact.o, ref.o, 1e-10, what + " float64 o"));
        EXPECT_TRUE(close(exact.final_state, ref.final_state, 1e-10, what + " float64 state"));
      }
  }
}

// The recurrence is the delta rule itself: one token with a unit key and beta 1 writes v exactly
// into the key's direction (S^T k = v afterwards), whatever the state held there before decay.
TEST(DeltaScan, BetaOneOverwritesTheKeysSlot) {
  auto o = torch::TensorOptions().dtype(torch::kFloat64);
  auto h0 = torch::randn({1, 1, 4, 3}, o);
  auto k = torch::randn({1, 1, 1, 4}, o);
  k = k / k.norm();
  auto v = torch::randn({1, 1, 1, 3}, o);
  auto s = delta_scan_sequential(k, k, v, torch::full({1, 1, 1}, -0.3, o), torch::ones({1, 1, 1}, o), h0);
  auto read_back = torch::einsum("bhkv,bhk->bhv", {s.final_state, k.select(1, 0)});
  EXPECT_TRUE(close(read_back, v.select(1, 0), 1e-12, "S^T k = v"));
  EXPECT_TRUE(close(s.o.select(1, 0), v.select(1, 0), 1e-12, "o = S^T q with q = k"));
}

// Gradients through the chunked form (inputs and the initial state) equal the recurrence's.
TEST(DeltaScan, ChunkedGradientsEqualTheRecurrence) {
  auto s = random_inputs(2, 45, 2, 5, 3, true, 2.0);
  auto grads = [&](bool chunked) {
    std::vector<torch::Tensor> in{s.q.clone().requires_grad_(), s.k.clone().requires_grad_(), s.v.clone().requires_grad_(),
                                  s.g.clone().requires_grad_(), s.beta.clone().requires_grad_(), s.h0.clone().requires_grad_()};
    auto out = chunked ? delta_scan_chunked(in[0], in[1], in[2], in[3], in[4], in[5], 16, true)
                       : delta_scan_sequential(in[0], in[1], in[2], in[3], in[4], in[5], true);
    (out.o.sin().sum() + out.final_state.square().sum() + out.norms.sum()).backward();
    std::vector<torch::Tensor> g;
    for (auto& t : in) g.push_back(t.grad());
    return g;
  };
  auto ref = grads(false), got = grads(true);
  const char* names[] = {"q", "k", "v", "g", "beta", "h0"};
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_TRUE(close(got[i], ref[i], 1e-9, std::string("grad ") + names[i]));
}

// The model against fla (recurrent_checks.h): logits, loss, final states and per-position state norms
// (fla stepping token by token) from the zero state, 70 tokens, and from random non-zero initial states
// given through fla's cache; on the chunked form and the recurrence.
TEST(GDNGolden, MatchesFlaOnItsOwnCheckpoints) {
  for (const char* dir : kFixtures) expect_matches_fla_golden(dir, "gated_deltanet");
}

// Two pieces with the state handed over (SSM and conv) equal one pass: logits, states, norms (4 value
// heads); and the chunked form's parameter gradients from a non-zero state equal the recurrence's.
TEST(GDNModel, TwoPiecesEqualOnePassAndChunkedTrainsLikeTheRecurrence) {
  RecurrentLM m = load_model_dir(kGolden + "fla-gdn", default_compute());
  auto ids = torch::randint(0, 64, {2, 45}, torch::kInt64);
  expect_pieces_equal_one_pass(m, ids, 13, {ScanImpl::Chunked, ScanImpl::Sequential}, /*chunk_size=*/8);
  EXPECT_EQ(m->forward(ids.narrow(1, 0, 3), nullptr, m->forward_options()).final_state[0].ssm.sizes(),
            (std::vector<int64_t>{2, 4, 6, 9}));
  auto ref = parameter_grads(m, ids, ScanImpl::Sequential, 16), got = parameter_grads(m, ids, ScanImpl::Chunked, 16);
  ASSERT_EQ(ref.size(), got.size());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_TRUE(close(got[i], ref[i], 1e-4, "parameter gradient " + std::to_string(i)));
}

// The delta rule keeps the state bounded by itself. With unit keys and beta in [0, 2] the transition
// exp(g)(I - beta k k^T) is non-expansive, so each step obeys ||S_t|| <= exp(g_t) ||S_{t-1}|| +
// beta_t ||v_t|| (checked per head and token, beta up to 2). Without decay, from zero, the norm
// levels off where linear attention's (S += k v^T, the GLA scan with no decay) keeps growing like
// sqrt(t); from a huge state the norm falls by orders of magnitude once the keys have spanned the space.
TEST(GDNModel, DeltaRuleStateStaysBoundedWhereLinearAttentionGrows) {
  for (double beta_max : {1.0, 2.0}) {
    auto s = random_inputs(1, 600, 2, 4, 3, true, beta_max);
    auto r = delta_scan_sequential(s.q, s.k, s.v, s.g, s.beta, s.h0, true);
    auto prev = torch::cat({s.h0.square().sum({-2, -1}).sqrt().unsqueeze(1), r.norms.narrow(1, 0, 599)}, 1);  // [1, L, H]
    auto bound = s.g.exp() * prev + s.beta * s.v.norm(2, -1);
    EXPECT_TRUE(torch::all(r.norms <= bound * (1 + 1e-12) + 1e-12).item<bool>()) << "per-step bound, beta < " << beta_max;
  }
  auto s = random_inputs(1, 600, 2, 4, 3, false);
  auto no_decay = torch::zeros_like(s.g);
  auto delta = delta_scan_sequential(s.q, s.k, s.v, no_decay, s.beta, {}, true).norms.select(0, 0);  // [L, H]
  auto linear = gla_scan_sequential(s.q, s.k, s.v, torch::zeros_like(s.q), {}, true).norms.select(0, 0);
  const double plateau = delta.narrow(0, 50, 250).max().item<double>(), late = delta.narrow(0, 300, 300).max().item<double>();
  EXPECT_LT(late, 1.5 * plateau) << "the delta rule's norm levels off";
  EXPECT_GT(linear.select(0, 599).min().item<double>(), 4.0 * delta.select(0, 599).max().item<double>())
      << "linear attention's keeps growing";
  auto big = torch::randn({1, 2, 4, 3}, torch::kFloat64) * 1000.0;
  auto from_big = delta_scan_sequential(s.q, s.k, s.v, no_decay, s.beta, big, true).norms.select(0, 0);
  EXPECT_LT(from_big.select(0, 599).max().item<double>(), 1e-2 * big.norm().item<double>()) << "a huge state is forgotten";
}

// Saved by statescope, read back: the same numbers; the config round-trips; the parameter count is
// what the model holds; the initialisation is fla's.
TEST(GDNModel, SavesReloadsAndCountsItsParameters) {
  for (const char* dir : kFixtures) {
    auto m = load_model_dir(kGolden + dir, default_compute());
    const auto& c = std::get<GatedDeltaNetConfig>(m->model_config());
    auto back = std::get<GatedDeltaNetConfig>(parse_model_config(to_hf_config_json(m->model_config()), "rt.json"));
    EXPECT_EQ(back.mlp_size(), c.mlp_size());
    EXPECT_EQ(back.v_heads(), c.v_heads());
    EXPECT_EQ(back.head_v_dim(), c.head_v_dim());
    EXPECT_EQ(back.use_short_conv, c.use_short_conv);
    EXPECT_EQ(back.use_gate, c.use_gate);
    EXPECT_EQ(back.sigmoid_gate, c.sigmoid_gate);
    EXPECT_EQ(back.allow_neg_eigval, c.allow_neg_eigval);
    EXPECT_EQ(back.tie_embeddings, c.tie_embeddings);
    expect_saves_and_reloads(dir);
  }
  GatedDeltaNetConfig c;
  c.d_model = 32, c.num_heads = 2, c.head_dim = 16;
  GatedDeltaNetLM m(c);
  m->reset_parameters(4);
  for (auto& p : m->named_parameters()) {
    const auto& k = p.key();
    if (k.find("norm") != std::string::npos) EXPECT_TRUE(torch::all(p.value() == 1).item<bool>()) << k;
    else if (k.find("A_log") != std::string::npos) {
      auto A = p.value().exp();
      EXPECT_TRUE(torch::all(A >= 1.0 - 1e-6).item<bool>() && torch::all(A <= 16.0 + 1e-5).item<bool>()) << k;
    } else if (k.find("dt_bias") != std::string::npos) {
      auto dt = torch::nn::functional::softplus(p.value());
      EXPECT_TRUE(torch::all(dt >= 1e-3 * 0.999).item<bool>() && torch::all(dt <= 0.1 * 1.001).item<bool>()) << k;
    } else if (p.value().numel() > 200) EXPECT_NEAR(p.value().std().item<double>(), 0.02, 0.004) << k;
  }
  const auto nwd = m->no_weight_decay();
  EXPECT_NE(std::find(nwd.begin(), nwd.end(), "model.layers.0.attn.A_log"), nwd.end());
  EXPECT_NE(std::find(nwd.begin(), nwd.end(), "model.layers.1.attn.dt_bias"), nwd.end());
  EXPECT_NE(std::find(nwd.begin(), nwd.end(), "model.layers.1.attn.o_norm.weight"), nwd.end());
  EXPECT_EQ(std::find(nwd.begin(), nwd.end(), "model.layers.0.attn.q_proj.weight"), nwd.end());
}

// What statescope does not implement is refused naming the option; misfit states name the axes.
TEST(GDNConfig, RefusesWhatItDoesNotImplementByName) {
  auto cfg = [](const std::string& extra) {
    return R"({"model_type": "gated_deltanet", "hidden_size": 32, "num_hidden_layers": 2, "num_heads": 2, "head_dim": 8, "vocab_size": 64)" +
           extra + "}";
  };
  expect_refused_by_name(cfg, {
           {R"(, "attn": {"layers": [1], "num_heads": 2})", "attn"},
           {R"(, "attnres_block_size": 2)", "attnres_block_size"},
           {R"(, "hidden_act": "powlu")", "hidden_act"},
           {R"(, "attn_mode": "fused_chunk")", "attn_mode"},
           {R"(, "output_gate_activation": "relu")", "output_gate_activation"},
           {R"(, "use_l2warp": true)", "use_l2warp"},
           {R"(, "conv_bias": true)", "conv_bias"},
           {R"(, "expand_v": 0.3)", "expand_v"},
           {R"(, "num_v_heads": 3)", "num_v_heads"},
           {R"(, "num_v_heads": 1)", "num_v_heads"}});
  EXPECT_NO_THROW(parse_model_config(cfg(R"(, "attn": null, "attnres_block_size": null, "num_v_heads": 4, "allow_neg_eigval": true)"), "ok.json"));
  const auto unknown = error_of([&] { parse_model_config(R"({"model_type": "kda"})", "r.json"); });
  EXPECT_NE(unknown.find("\"gated_deltanet\""), std::string::npos) << unknown;

  expect_misfit_states_refused("fla-gdn-plain", {1, 2, 16, 8});
}

// dt_scale multiplies GDN's softplus term (its dt) and a_scale its A: both scale the log decay;
// longmamba is refused by name; clip bounds each head's norm.
TEST(GDNModel, InterventionsActOnTheDecayOrAreRefusedByName) {
  InterventionProbe p("fla-gdn");
  p.iv.layers[0].dt_factor = torch::full({4}, 2.0, torch::kFloat64);
  auto twice = p.run();
  EXPECT_TRUE(close(twice.log_decay[0], p.base.log_decay[0] * 2.0, 1e-6, "dt x2 doubles the log decay"));
  p.iv.layers[0] = LayerIntervention{};
  p.iv.layers[1].a_factor = 0.5;
  auto half = p.run();
  EXPECT_TRUE(close(half.log_decay[1], p.base.log_decay[1] * 0.5, 1e-6, "a_scale halves the log decay"));
  EXPECT_TRUE(close(half.log_decay[0], p.base.log_decay[0], 0, "other layer untouched"));
  p.iv.layers[1] = LayerIntervention{};
  p.iv.layers[0].dt_threshold = torch::zeros({4}, torch::kFloat64);
  const auto msg = error_of([&] { p.run(); });
  EXPECT_NE(msg.find("longmamba"), std::string::npos) << msg;
  expect_clip_bounds_the_norm(p);
}
