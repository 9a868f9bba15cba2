// test_mamba1.cpp — Mamba-1: the CPU selective-scan loops against the float64 recurrence (outputs,
// final state, norms and every gradient, odd sizes, non-zero initial states), the model against
// transformers' MambaForCausalLM in both checkpoint layouts (tests/golden/*mamba1*, made by
// make_golden_mamba1.py), two pieces with the state handed over equal to one pass, and its configs.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/checkpoint.h"
#include "core/model/mamba1/model.h"
#include "core/model/mamba1/selective_scan.h"
#include "core/model/model_config.h"
#include "core/store/h5file.h"
#include "tests/golden_util.h"
#include "tests/recurrent_checks.h"
#include "tests/test_util.h"

using namespace statescope;
using namespace statescope::test;

namespace {

struct ScanInputs {
  torch::Tensor x, dt, A, B, C, D, h0;
};

ScanInputs random_inputs(int64_t b, int64_t L, int64_t Di, int64_t N, bool with_h0, torch::Dtype dtype) {
  torch::manual_seed(b * 1000 + L * 10 + N);
  auto o = torch::TensorOptions().dtype(dtype);
  ScanInputs s;
  s.x = torch::randn({b, L, Di}, o);
  s.dt = torch::nn::functional::softplus(torch::randn({b, L, Di}, o) - 1.0);
  s.A = -torch::exp(torch::randn({Di, N}, o) * 0.5);
  s.B = torch::randn({b, L, N}, o);
  s.C = torch::randn({b, L, N}, o);
  s.D = torch::randn({Di}, o);
  if (with_h0) s.h0 = torch::randn({b, Di, N}, o);
  return s;
}

}  // namespace

// Outputs, final state and norms of the loops equal the float64 recurrence, at odd sizes (N not a
// multiple of the eight lanes, lengths 1 and 0) and with and without an initial state.
TEST(Mamba1Scan, LoopsEqualTheFloat64Recurrence) {
  for (auto [b, L, Di, N, groups] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {2, 37, 12, 6, 3}, {1, 1, 8, 16, 2}, {3, 70, 5, 19, 1}, {2, 0, 4, 8, 2}}) {
    for (bool h0 : {false, true}) {
      auto s = random_inputs(b, L, Di, N, h0, torch::kFloat64);
      auto ref = selective_scan_sequential(s.x, s.dt, s.A, s.B, s.C, s.D, s.h0, groups, true);
      auto f = [](const torch::Tensor& t) { return t.defined() ? t.to(torch::kFloat32) : t; };
      auto got = selective_scan_cpu(f(s.x), f(s.dt), f(s.A), f(s.B), f(s.C), f(s.D), f(s.h0), groups, true);
      const std::string what = "L=" + std::to_string(L) + " N=" + std::to_string(N) + (h0 ? " h0" : "");
      EXPECT_TRUE(close(got.y, ref.y, 2e-5, what + " y"));
      EXPECT_TRUE(close(got.final_state, ref.final_state, 2e-5, what + " final state"));
      EXPECT_TRUE(close(got.state_norm, ref.state_norm, 2e-5, what + " norms"));
      EXPECT_TRUE(close(got.delta_norm, ref.delta_norm, 2e-5, what + " delta norms"));
    }
  }
}

// Every gradient of the loops' own backward equals autograd through the float64 recurrence.
TEST(Mamba1Scan, LoopsBackwardEqualsAutogradOfTheRecurrence) {
  for (auto [b, L, Di, N] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{{2, 41, 10, 6}, {1, 130, 35, 16}}) {
    auto s = random_inputs(b, L, Di, N, true, torch::kFloat64);
    auto gy = torch::randn({b, L, Di}, torch::kFloat64), gh = torch::randn({b, Di, N}, torch::kFloat64);
    auto grads = [&](bool loops) {
      std::vector<torch::Tensor> in;
      for (auto* t : {&s.x, &s.dt, &s.A, &s.B, &s.C, &s.D, &s.h0})
        in.push_back((loops ? t->to(torch::kFloat32) : t->clone()).requires_grad_(true));
      auto r = loops ? selective_scan_cpu(in[0], in[1], in[2], in[3], in[4], in[5], in[6], 1, false)
                     : selective_scan_sequential(in[0], in[1], in[2], in[3], in[4], in[5], in[6], 1, false);
      auto loss = (r.y * gy.to(r.y.scalar_type())).sum() + (r.final_state * gh.to(r.y.scalar_type())).sum();
      loss.backward();
      std::vector<torch::Tensor> g;
      for (auto& t : in) g.push_back(t.grad());
      return g;
    };
    auto ref = grads(false), got = grads(true);
    const char* names[] = {"dx", "ddt", "dA", "dB", "dC", "dD", "dh0"};
    for (size_t i = 0; i < ref.size(); ++i)
      EXPECT_TRUE(close(got[i], ref[i], 2e-4, std::string(names[i]) + " L=" + std::to_string(L)));
  }
}

TEST(Mamba1Scan, BadShapesAreNamed) {
  auto s = random_inputs(1, 4, 6, 4, false, torch::kFloat32);
  try {
    selective_scan_cpu(s.x, s.dt, s.A, s.B.narrow(2, 0, 3), s.C, s.D, s.h0, 1, false);
    FAIL() << "a misshapen B was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("B must be"), std::string::npos) << e.what();
  }
  EXPECT_THROW(selective_scan_cpu(s.x, s.dt, s.A, s.B, s.C, s.D, s.h0, 4, false), Error);  // 4 groups of 6
}

// The layout and the channel groups: mamba-130m's d_inner 1536 in 24 groups of 64.
TEST(Mamba1Config, LayoutAndGroups) {
  EXPECT_EQ(channel_groups(1536), 24);
  EXPECT_EQ(channel_groups(48), 1);
  EXPECT_EQ(channel_groups(96), 2);
  EXPECT_EQ(channel_groups(100), 2);
  const auto c = load_model_config(kGolden + "hf-mamba1/config.json");
  ASSERT_EQ(architecture(c), "mamba1");
  const auto l = state_layout(c);
  EXPECT_EQ(l.ssm_shape(3), (std::vector<int64_t>{3, 48, 6}));
  EXPECT_EQ(l.conv_shape(3), (std::vector<int64_t>{3, 48, 3}));
  EXPECT_EQ(l.ssm_axes(), "(d_inner, d_state)");
  const auto& m = std::get<Mamba1Config>(c);
  EXPECT_EQ(m.rank(), 2);
  EXPECT_TRUE(m.tie_embeddings);
}

// Both dialects give the same architecture; an unknown one names the ones statescope knows.
TEST(Mamba1Config, BothDialectsAndUnknownArchitectures) {
  const auto hf = std::get<Mamba1Config>(load_model_config(kGolden + "hf-mamba1/config.json"));
  const auto ssm = std::get<Mamba1Config>(load_model_config(kGolden + "ssm-mamba1/config.json"));
  EXPECT_EQ(hf.parameter_count(), ssm.parameter_count());
  EXPECT_EQ(hf.vocab_size, ssm.vocab_size);  // 60 padded to 64
  auto back = std::get<Mamba1Config>(parse_model_config(to_hf_config_json(hf), "rt.json"));
  EXPECT_EQ(back.parameter_count(), hf.parameter_count());
  for (auto [text, frag] : std::vector<std::pair<std::string, std::string>>{
           {R"({"model_type": "rwkv", "hidden_size": 8})", "\"mamba\" (Mamba-1)"},
           {R"({"d_model": 8, "n_layer": 1, "vocab_size": 8, "ssm_cfg": {"layer": "Mamba3"}})", "ssm_cfg.layer"},
           {R"({"model_type": "mamba", "hidden_size": 8, "num_hidden_layers": 1, "vocab_size": 8, "time_step_rank": "big"})",
            "time_step_rank"}}) {
    try {
      parse_model_config(text, "cfg.json");
      FAIL() << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(frag), std::string::npos) << e.what();
    }
  }
}

// The model against transformers: logits, loss, final SSM and conv states, and single-token steps
// from the cached state, for save_pretrained (tied, untied) and torch.save(state_dict) in mamba_ssm's
// names; on the fast path (CPU loops) and the ATen recurrence.
TEST(Mamba1Golden, MatchesTransformersInBothLayouts) {
  for (const char* dir : {"hf-mamba1", "hf-mamba1-untied", "ssm-mamba1"})
    for (ScanImpl scan : {ScanImpl::Fused, ScanImpl::Chunked}) {
      auto model = load_model_dir(kGolden + dir, default_compute());
      ASSERT_EQ(model->architecture(), "mamba1") << dir;
      H5File g(kGolden + dir + "/golden.h5", H5File::Mode::Read);
      torch::NoGradGuard ng;
      ForwardOptions opt;
      opt.scan = scan;
      const std::string what = std::string(dir) + (scan == ScanImpl::Fused ? " loops" : " aten");
      auto ids = read(g, "input_ids");
      auto out = model->forward(ids, nullptr, opt);
      expect_logits_and_loss(out, ids, g, what);
      auto ssm = read(g, "final_ssm_state"), conv = read(g, "final_conv_state");
      for (size_t i = 0; i < out.final_state.size(); ++i) {
        EXPECT_TRUE(close(out.final_state[i].ssm, ssm[i], 1e-4, what + " ssm"));
        EXPECT_TRUE(close(out.final_state[i].conv, conv[i], 1e-4, what + " conv"));
      }
      ModelState s = out.final_state;
      EXPECT_TRUE(close(step_through(model, read(g, "step_ids"), s, opt), read(g, "step_logits"), 1e-4, what + " step logits"));
      auto ssm2 = read(g, "after_steps_ssm_state"), conv2 = read(g, "after_steps_conv_state");
      for (size_t i = 0; i < s.size(); ++i) {
        EXPECT_TRUE(close(s[i].ssm, ssm2[i], 1e-4, what + " ssm after steps"));
        EXPECT_TRUE(close(s[i].conv, conv2[i], 1e-4, what + " conv after steps"));
      }
    }
}

// Two pieces with the state handed over equal one pass (logits, states, norms), in float64 through the
// recurrence and in float32 through the loops; and the loops' training gradients equal the recurrence's.
TEST(Mamba1Model, TwoPiecesEqualOnePassAndTheFastPathTrainsLikeTheReference) {
  Mamba1Config c;
  c.d_model = 20, c.n_layer = 2, c.d_state = 5, c.vocab_size = 40;
  Mamba1LM m(c);
  m->reset_parameters(3);
  {
    torch::NoGradGuard ng;  // move A and D off their init so every path is exercised
    for (auto& p : m->named_parameters())
      if (p.key().find("A_log") != std::string::npos) p.value().copy_(torch::log(torch::rand_like(p.value()) * 3 + 0.3));
  }
  auto ids = torch::randint(0, 40, {2, 29}, torch::kInt64);
  ForwardOptions opt;
  opt.state_norms = true;
  for (ScanImpl scan : {ScanImpl::Fused, ScanImpl::Sequential}) {
    opt.scan = scan;
    torch::NoGradGuard ng;
    auto whole = m->forward(ids, nullptr, opt);
    auto a = m->forward(ids.narrow(1, 0, 11), nullptr, opt);
    auto b = m->forward(ids.narrow(1, 11, 18), &a.final_state, opt);
    EXPECT_TRUE(close(torch::cat({a.logits, b.logits}, 1), whole.logits, 1e-5, "pieces logits"));
    EXPECT_TRUE(close(torch::cat({a.norm_per_head, b.norm_per_head}, 2), whole.norm_per_head, 1e-5, "pieces norms"));
    for (size_t i = 0; i < whole.final_state.size(); ++i) {
      EXPECT_TRUE(close(b.final_state[i].ssm, whole.final_state[i].ssm, 1e-5, "pieces ssm"));
      EXPECT_TRUE(close(b.final_state[i].conv, whole.final_state[i].conv, 1e-5, "pieces conv"));
    }
  }
  auto grads = [&](ScanImpl scan) {
    m->zero_grad();
    ForwardOptions o;
    o.scan = scan;
    auto init = m->zero_state(2);
    for (auto& l : init) l.ssm = torch::randn_like(l.ssm, torch::TensorOptions().dtype(torch::kFloat32));
    torch::manual_seed(9);
    for (auto& l : init) l.ssm.normal_();
    auto out = m->forward(ids, &init, o);
    torch::nn::functional::cross_entropy(out.logits.reshape({-1, 40}), ids.reshape({-1})).backward();
    std::vector<torch::Tensor> g;
    for (auto& p : m->parameters()) g.push_back(p.grad().clone());
    return g;
  };
  auto ref = grads(ScanImpl::Sequential), got = grads(ScanImpl::Fused);
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_TRUE(close(got[i], ref[i], 1e-4, "parameter gradient " + std::to_string(i)));
}

// A misshapen or missing tensor is named.
TEST(Mamba1Model, MisshapenCheckpointTensorsAreNamed) {
  auto sd = read_weights_file(kGolden + "hf-mamba1/model.safetensors");
  Mamba1Config c = std::get<Mamba1Config>(load_model_config(kGolden + "hf-mamba1/config.json"));
  auto bad = sd;
  bad["backbone.layers.1.mixer.x_proj.weight"] = torch::zeros({3, 3});
  Mamba1LM m(c);
  try {
    load_state_dict(*m, bad, "x.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("backbone.layers.1.mixer.x_proj.weight"), std::string::npos) << e.what();
  }
  bad = sd;
  bad.erase("backbone.layers.0.mixer.dt_proj.bias");
  try {
    load_state_dict(*m, bad, "x.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dt_proj.bias' is missing"), std::string::npos) << e.what();
  }
}
