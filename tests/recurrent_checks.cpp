// recurrent_checks.cpp — see recurrent_checks.h.
#include "tests/recurrent_checks.h"

#include <gtest/gtest.h>

#include "core/model/checkpoint.h"
#include "core/store/h5file.h"
#include "core/model/model_config.h"
#include "tests/error_text.h"
#include "tests/golden_util.h"
#include "tests/scratch.h"
#include "tests/test_util.h"

namespace statescope::test {

void expect_matches_fla_golden(const std::string& dir, const std::string& architecture) {
  for (ScanImpl scan : {ScanImpl::Chunked, ScanImpl::Sequential}) {
    auto model = load_model_dir(kGolden + dir, default_compute());
    ASSERT_EQ(model->architecture(), architecture) << dir;
    H5File g(kGolden + dir + "/golden.h5", H5File::Mode::Read);
    const bool conv = g.has("final_conv_state");
    EXPECT_EQ(model->state_layout().conv.empty(), !conv) << dir;
    torch::NoGradGuard ng;
    ForwardOptions opt;
    opt.scan = scan;
    opt.chunk_size = 16;  // chunk boundaries inside the 45 and 70 tokens
    opt.state_norms = true;
    const std::string what = dir + (scan == ScanImpl::Chunked ? " chunked" : " sequential");
    auto ids = read(g, "input_ids");
    auto out = model->forward(ids, nullptr, opt);
    expect_logits_and_loss(out, ids, g, what);
    EXPECT_TRUE(close(out.norm_per_head, read(g, "ssm_state_norm_per_head"), 1e-4, what + " state norms"));
    auto ssm = read(g, "final_ssm_state");
    for (size_t i = 0; i < out.final_state.size(); ++i) {
      EXPECT_TRUE(close(out.final_state[i].ssm, ssm[i], 1e-4, what + " ssm"));
      if (conv) EXPECT_TRUE(close(out.final_state[i].conv, read(g, "final_conv_state")[i], 1e-5, what + " conv"));
    }
    EXPECT_TRUE(close(model->forward(read(g, "input_ids_long"), nullptr, opt).logits, read(g, "logits_long"), 1e-4,
                      what + " long logits"));
    ModelState init;
    auto ssm0 = read(g, "initial_ssm_state");
    for (int64_t i = 0; i < ssm0.size(0); ++i)
      init.push_back({ssm0[i], conv ? read(g, "initial_conv_state")[i] : torch::Tensor()});
    auto from = model->forward(ids, &init, opt);
    EXPECT_TRUE(close(from.logits, read(g, "logits_from_state"), 1e-4, what + " logits from a state"));
    auto ssm1 = read(g, "final_ssm_state_from_state");
    for (size_t i = 0; i < from.final_state.size(); ++i) {
      EXPECT_TRUE(close(from.final_state[i].ssm, ssm1[i], 1e-4, what + " ssm from a state"));
      if (conv)
        EXPECT_TRUE(close(from.final_state[i].conv, read(g, "final_conv_state_from_state")[i], 1e-5, what + " conv from a state"));
    }
  }
}

void expect_pieces_equal_one_pass(RecurrentLM& m, const torch::Tensor& ids, int64_t split,
                                  const std::vector<ScanImpl>& scans, int64_t chunk_size) {
  ForwardOptions opt;
  opt.state_norms = true;
  opt.chunk_size = chunk_size;
  for (ScanImpl scan : scans) {
    opt.scan = scan;
    torch::NoGradGuard ng;
    auto whole = m->forward(ids, nullptr, opt);
    auto a = m->forward(ids.narrow(1, 0, split), nullptr, opt);
    auto b = m->forward(ids.narrow(1, split, ids.size(1) - split), &a.final_state, opt);
    EXPECT_TRUE(close(torch::cat({a.logits, b.logits}, 1), whole.logits, 1e-5, "pieces logits"));
    EXPECT_TRUE(close(torch::cat({a.norm_per_head, b.norm_per_head}, 2), whole.norm_per_head, 1e-5, "pieces norms"));
    EXPECT_TRUE(close(torch::cat({a.delta_norm, b.delta_norm}, 2), whole.delta_norm, 1e-5, "pieces delta norms"));
    for (size_t i = 0; i < whole.final_state.size(); ++i) {
      EXPECT_TRUE(close(b.final_state[i].ssm, whole.final_state[i].ssm, 1e-5, "pieces ssm"));
      if (whole.final_state[i].conv.defined())
        EXPECT_TRUE(close(b.final_state[i].conv, whole.final_state[i].conv, 1e-5, "pieces conv"));
    }
    ASSERT_EQ(b.final_state.attention.size(), whole.final_state.attention.size());
    for (size_t i = 0; i < whole.final_state.attention.size(); ++i) {  // a hybrid's caches
      EXPECT_TRUE(close(b.final_state.attention[i].keys, whole.final_state.attention[i].keys, 1e-5, "pieces keys"));
      EXPECT_TRUE(close(b.final_state.attention[i].values, whole.final_state.attention[i].values, 1e-5, "pieces values"));
    }
  }
}

std::vector<torch::Tensor> parameter_grads(RecurrentLM& m, const torch::Tensor& ids, ScanImpl scan, int64_t chunk_size) {
  m->zero_grad();
  ForwardOptions o;
  o.scan = scan;
  o.chunk_size = chunk_size;
  torch::manual_seed(9);
  auto init = m->zero_state(ids.size(0));
  for (auto& l : init) {
    l.ssm.normal_();
    if (l.conv.defined()) l.conv.normal_();
  }
  auto out = m->forward(ids, &init, o);
  const int64_t V = out.logits.size(-1), L = ids.size(1);
  torch::nn::functional::cross_entropy(out.logits.narrow(1, 0, L - 1).reshape({-1, V}), ids.narrow(1, 1, L - 1).reshape({-1}))
      .backward();
  std::vector<torch::Tensor> g;
  for (auto& p : m->parameters()) g.push_back(p.grad().clone());
  return g;
}

void expect_saves_and_reloads(const std::string& dir) {
  auto m = load_model_dir(kGolden + dir, default_compute());
  int64_t n = 0;
  for (auto& p : m->parameters()) n += p.numel();
  EXPECT_EQ(n, parameter_count(m->model_config())) << dir;
  const auto out = scratch("save-" + dir);
  save_model_dir(m, out);
  auto r = load_model_dir(out, default_compute());
  auto ids = torch::randint(0, vocab_size(m->model_config()), {1, 20}, torch::kInt64);
  torch::NoGradGuard ng;
  EXPECT_TRUE(close(r->forward(ids).logits, m->forward(ids).logits, 0, dir + " reloaded"));
}

void expect_refused_by_name(const std::function<std::string(const std::string&)>& config,
                            const std::vector<std::pair<std::string, std::string>>& extra_and_field) {
  for (const auto& [extra, field] : extra_and_field) {
    const auto msg = error_of([&] { parse_model_config(config(extra), "fla.json"); });
    EXPECT_NE(msg.find("fla.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(field), std::string::npos) << extra << " -> " << msg;
  }
}

void expect_misfit_states_refused(const std::string& dir, const std::vector<int64_t>& wrong_ssm) {
  auto m = load_model_dir(kGolden + dir, default_compute());
  auto s = m->zero_state(1);
  s[0].conv = torch::zeros({1, 3, 3});
  const auto msg = error_of([&] { m->forward(torch::zeros({1, 4}, torch::kInt64), &s); });
  EXPECT_NE(msg.find("has no conv state"), std::string::npos) << msg;
  s = m->zero_state(1);
  s[1].ssm = torch::zeros(wrong_ssm);
  const auto msg2 = error_of([&] { m->forward(torch::zeros({1, 4}, torch::kInt64), &s); });
  EXPECT_NE(msg2.find("heads, head_k_dim, head_v_dim"), std::string::npos) << msg2;
}

void expect_logits_and_loss(const ForwardOutput& out, const torch::Tensor& ids, const H5File& g, const std::string& what) {
  EXPECT_TRUE(close(out.logits, read(g, "logits"), 1e-4, what + " logits"));
  const int64_t V = out.logits.size(-1), L = ids.size(1);
  auto loss = torch::nn::functional::cross_entropy(out.logits.narrow(1, 0, L - 1).reshape({-1, V}),
                                                   ids.narrow(1, 1, L - 1).reshape({-1}));
  EXPECT_NEAR(loss.item<double>(), read(g, "loss")[0].item<double>(), 1e-4) << what;
}

torch::Tensor step_through(RecurrentLM& m, const torch::Tensor& steps, ModelState& s, const ForwardOptions& opt) {
  std::vector<torch::Tensor> logits;
  for (int64_t t = 0; t < steps.size(1); ++t) {
    auto o = m->forward(steps.narrow(1, t, 1), &s, opt);
    logits.push_back(o.logits);
    s = o.final_state;
  }
  return torch::cat(logits, 1);
}

InterventionProbe::InterventionProbe(const std::string& dir) : m(load_model_dir(kGolden + dir, default_compute())) {
  torch::manual_seed(0);
  ids = torch::randint(0, 64, {1, 30}, torch::kInt64);
  opt.state_norms = true;
  opt.log_decay = true;
  torch::NoGradGuard ng;
  base = m->forward(ids, nullptr, opt);
  iv.label = "probe";
  iv.layers.resize(2);
  opt.intervention = &iv;
}

ForwardOutput InterventionProbe::run() {
  torch::NoGradGuard ng;
  return m->forward(ids, nullptr, opt);
}

void expect_clip_bounds_the_norm(InterventionProbe& p) {
  p.iv.layers.assign(2, LayerIntervention{});
  const double cap = 0.5 * p.base.norm_per_head[0].max().item<double>();
  p.iv.layers[0].max_norm = torch::full({4}, cap, torch::kFloat64);
  auto clipped = p.run();
  EXPECT_LE(clipped.norm_per_head[0].max().item<double>(), cap * (1 + 1e-6));
  EXPECT_GT(clipped.norm_per_head[0].max().item<double>(), 0.9 * cap);  // the cap binds
}

}  // namespace statescope::test
