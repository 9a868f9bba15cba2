// test_train.cpp — samplers, initial-state policies and the training loop: TBTT equals one pass
// over the concatenation, state passing feeds exactly the previous final states, fitted noise
// converges to known statistics, NaN stops a run, cancel, determinism, frozen A, schedule.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <torch/torch.h>

#include <random>

#include <cmath>
#include <filesystem>

#include "core/base/error.h"
#include "core/train/samplers.h"
#include "core/train/state_policy.h"
#include "core/train/trainer.h"
#include "tests/test_util.h"
#include "tests/error_text.h"

using namespace statescope;
using statescope::test::close;

namespace {

Mamba2Config tiny_byte() {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
  return c;
}

std::vector<Document> synthetic_docs(int n, int len, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Document> docs;
  for (int i = 0; i < n; ++i) {
    std::vector<int32_t> ids;
    for (int t = 0; t < len; ++t) ids.push_back(static_cast<int32_t>('a' + rng() % 26));
    docs.push_back({"doc" + std::to_string(i), ids});
  }
  return docs;
}

}  // namespace

TEST(Samplers, StreamWindowsAreConsecutiveAndFlagFreshRows) {
  auto docs = synthetic_docs(3, 100, 1);
  StreamSampler s(docs, /*T=*/16, /*batch=*/2, 7);
  auto b1 = s.next();
  EXPECT_TRUE(b1.fresh.all().item<bool>());
  auto [doc, pos] = s.cursor(0);
  EXPECT_EQ(pos, 16);
  auto b2 = s.next();
  EXPECT_FALSE(b2.fresh.any().item<bool>());
  // The second window starts at the first window's last token: no target is skipped.
  EXPECT_TRUE(torch::equal(b2.tokens.select(1, 0), b1.tokens.select(1, 16)));
  for (int i = 0; i < 4; ++i) s.next();  // 6 windows of 16 > 100 tokens: rows must have moved on
  auto b7 = s.next();
  EXPECT_TRUE(b7.fresh.any().item<bool>());
}

TEST(Samplers, WindowSamplerIsDeterministic) {
  auto docs = synthetic_docs(4, 80, 2);
  WindowSampler a(docs, 16, 3), b(docs, 16, 3);
  EXPECT_TRUE(torch::equal(a.next(5), b.next(5)));
  WindowSampler c(docs, 16, 4);
  EXPECT_FALSE(torch::equal(a.next(5), c.next(5)));
}

// TBTT over k segments gives exactly the losses of one pass over each row's concatenated text.
TEST(Policies, TbttEqualsOnePassOverTheConcatenation) {
  auto cfg = tiny_byte();
  RecurrentLM model = Mamba2LM(cfg);
  model->reset_parameters(5);
  model->to(torch::kFloat64);
  torch::NoGradGuard ng;
  auto docs = synthetic_docs(2, 200, 9);
  const int64_t T = 16, B = 2, k = 5;
  StreamSampler sampler(docs, T, B, 11);
  PolicySpec ps;
  ps.kind = "tbtt";
  auto policy = make_policy(ps, 0);
  ASSERT_TRUE(policy->wants_stream());
  std::vector<torch::Tensor> seg_nll, seg_tokens;
  for (int64_t step = 1; step <= k; ++step) {
    auto b = sampler.next();
    PolicyStep st{step, b.fresh};
    auto init = policy->initial(model, B, st);
    auto out = model->forward(b.tokens.narrow(1, 0, T), init.empty() ? nullptr : &init);
    seg_nll.push_back(torch::nn::functional::cross_entropy(
        out.logits.reshape({-1, 256}), b.tokens.narrow(1, 1, T).reshape({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone)).view({B, T}));
    seg_tokens.push_back(step == 1 ? b.tokens : b.tokens.narrow(1, 1, T));
    policy->observe(detach_state(out.final_state), st);
  }
  auto whole = torch::cat(seg_tokens, 1);  // [B, k*T+1]
  auto out = model->forward(whole.narrow(1, 0, k * T));
  auto ref = torch::nn::functional::cross_entropy(
      out.logits.reshape({-1, 256}), whole.narrow(1, 1, k * T).reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone)).view({B, k * T});
  EXPECT_TRUE(close(torch::cat(seg_nll, 1), ref, 1e-9, "TBTT losses"));
}

TEST(Policies, StatePassingFeedsExactlyThePreviousFinalStates) {
  auto cfg = tiny_byte();
  RecurrentLM model = Mamba2LM(cfg);
  for (int pass_conv : {-1, 0}) {
    PolicySpec ps;
    ps.kind = "passing";
    ps.pass_conv = pass_conv;
    auto policy = make_policy(ps, 0);
    EXPECT_TRUE(policy->initial(model, 3, {1, {}}).empty());  // the first batch starts at zero
    ModelState fin;
    for (int64_t i = 0; i < cfg.n_layer; ++i)
      fin.push_back({torch::randn({3, cfg.nheads(), cfg.headdim, cfg.d_state}), torch::randn({3, cfg.conv_dim(), 3})});
    policy->observe(fin, {1, {}});
    auto init = policy->initial(model, 3, {2, {}});
    ASSERT_EQ(init.size(), fin.size());
    for (size_t i = 0; i < fin.size(); ++i) {
      EXPECT_TRUE(torch::equal(init[i].ssm, fin[i].ssm));
      EXPECT_FALSE(init[i].ssm.requires_grad());
      if (pass_conv == 0) EXPECT_FALSE(init[i].conv.defined());
      else EXPECT_TRUE(torch::equal(init[i].conv, fin[i].conv));
    }
    EXPECT_THROW(policy->initial(model, 4, {3, {}}), std::exception);  // batch size changed
  }
}

// A policy of `kind`, its spec edited by `edit`.
static std::unique_ptr<InitialStatePolicy> policy_of(const std::string& kind, uint64_t seed, const std::function<void(PolicySpec&)>& edit) {
  PolicySpec ps;
  ps.kind = kind;
  edit(ps);
  return make_policy(ps, seed);
}

TEST(Policies, RandomNoiseHasTheRequestedSigma) {
  RecurrentLM model = Mamba2LM(tiny_byte());
  auto policy = policy_of("random", 3, [](PolicySpec& p) { p.sigma = 0.5; });
  auto s = policy->initial(model, 64, {1, {}});
  auto x = torch::cat({s[0].ssm.flatten(), s[1].ssm.flatten()});
  EXPECT_NEAR(x.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(x.std().item<double>(), 0.5, 0.01);
  EXPECT_EQ(s[0].conv.abs().max().item<double>(), 0.0);  // noise leaves the conv state at zero by default
}

TEST(Policies, FittedNoiseConvergesToKnownStatistics) {
  auto cfg = tiny_byte();
  RecurrentLM model = Mamba2LM(cfg);
  auto policy = policy_of("fitted", 4, [](PolicySpec& p) { p.ema = 0.9; });
  const int64_t H = cfg.nheads();
  auto mean = torch::linspace(-1, 1, cfg.n_layer * H, torch::kFloat64).view({cfg.n_layer, H});
  auto std = torch::linspace(0.2, 2, cfg.n_layer * H, torch::kFloat64).view({cfg.n_layer, H});
  torch::manual_seed(0);
  for (int step = 0; step < 200; ++step) {
    ModelState s;
    for (int64_t l = 0; l < cfg.n_layer; ++l)
      s.push_back({(mean[l].view({1, H, 1, 1}) + std[l].view({1, H, 1, 1}) * torch::randn({8, H, cfg.headdim, cfg.d_state},
                                                                                          torch::kFloat64)).to(torch::kFloat32),
                   {}});
    policy->observe(s, {step, {}});
  }
  EXPECT_TRUE(close(policy->fitted_mean(), mean, 0.02, "fitted mean"));
  EXPECT_TRUE(close(policy->fitted_std(), std, 0.02, "fitted std"));
  // Samples follow the fitted Gaussian per (layer, head).
  auto init = policy->initial(model, 256, {201, {}});
  auto m = init[1].ssm.transpose(0, 1).reshape({H, -1}).to(torch::kFloat64);
  EXPECT_TRUE(close(m.mean(1), mean[1], 0.03, "sample mean"));
  EXPECT_TRUE(close(m.std(1), std[1], 0.03, "sample std"));
}

TEST(Policies, UnknownKindIsRefused) {
  PolicySpec ps;
  ps.kind = "teleport";
  try {
    make_policy(ps, 0);
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("'teleport'"), std::string::npos);
  }
}

// The loss a step reports (and descends) is the mean cross-entropy over the targets the documents'
// loss_mask marks, computed here by hand from one full forward; loss_mask = false scores every
// target; a mask of the wrong size is refused by the document's name; samplers carry the mask.
TEST(Trainer, LossMaskScoresOnlyTheMarkedTargets) {
  const int64_t T = 12;
  auto docs = synthetic_docs(1, T + 1, 4);  // one document = one window: the batch is known
  docs[0].loss_mask.assign(T + 1, 0);
  for (int64_t i : {3, 4, 9, 12}) docs[0].loss_mask[i] = 1;
  RecurrentLM m = Mamba2LM(tiny_byte());
  m->reset_parameters(2);
  auto x = torch::empty({1, T + 1}, torch::kInt64);  // [1, T+1]
  docs[0].tokens.copy(0, T + 1, x.data_ptr<int64_t>());
  double masked = 0, all = 0;
  {
    torch::NoGradGuard ng;
    auto lp = torch::log_softmax(m->forward(x.narrow(1, 0, T)).logits.to(torch::kFloat64), -1);  // [1, T, V]
    for (int64_t t = 0; t < T; ++t) {
      const double ce = -lp[0][t][x[0][t + 1].item<int64_t>()].item<double>();
      all += ce / T;
      if (docs[0].loss_mask[t + 1]) masked += ce / 4;
    }
  }
  TrainOptions o;
  o.steps = 1; o.batch = 2; o.T = T;
  for (bool use : {true, false}) {
    RecurrentLM c = Mamba2LM(tiny_byte());
    c->reset_parameters(2);
    o.loss_mask = use;
    auto zero = make_policy(PolicySpec{}, 1);
    auto r = train(c, docs, *zero, o);
    ASSERT_EQ(r.status, "finished");
    EXPECT_NEAR(r.history[0].loss, use ? masked : all, 1e-5) << (use ? "masked" : "all targets");
  }
  EXPECT_GT(std::abs(masked - all), 1e-3);  // the two differ, so the test tells them apart
  WindowSampler w(docs, T, 1);
  torch::Tensor mask;
  w.next(2, &mask);
  ASSERT_TRUE(mask.defined());
  EXPECT_EQ(mask.sum().item<double>(), 8.0);
  auto bad = docs;
  bad[0].loss_mask.pop_back();
  try {
    WindowSampler(bad, T, 1);
    FAIL() << "a short mask was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("doc0"), std::string::npos) << e.what();
  }
}

TEST(Trainer, ScheduleWarmupThenCosine) {
  TrainOptions o;
  o.steps = 100; o.warmup = 10; o.lr = 1.0; o.min_lr_ratio = 0.1;
  EXPECT_DOUBLE_EQ(learning_rate(o, 1), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate(o, 10), 1.0);
  EXPECT_NEAR(learning_rate(o, 55), 0.55, 1e-12);
  EXPECT_NEAR(learning_rate(o, 100), 0.1, 1e-12);
}

TEST(Trainer, LearnsDeterministicallyAndKeepsFrozenA) {
  auto docs = synthetic_docs(4, 400, 5);
  TrainOptions o;
  o.steps = 30; o.batch = 8; o.T = 16; o.lr = 3e-3; o.seed = 1; o.freeze_A_log = true;
  auto run = [&](std::vector<double>& losses, torch::Tensor& a_log) {
    RecurrentLM m = Mamba2LM(tiny_byte());
    m->reset_parameters(0);
    auto a0 = m->named_parameters()["backbone.layers.0.mixer.A_log"].clone();
    auto policy = make_policy(PolicySpec{}, 0);
    auto r = train(m, docs, *policy, o);
    EXPECT_EQ(r.status, "finished");
    EXPECT_EQ(r.steps_done, 30);
    for (auto& s : r.history) losses.push_back(s.loss);
    a_log = m->named_parameters()["backbone.layers.0.mixer.A_log"];
    EXPECT_TRUE(torch::equal(a_log, a0));
  };
  std::vector<double> l1, l2;
  torch::Tensor a1, a2;
  run(l1, a1);
  run(l2, a2);
  EXPECT_EQ(l1, l2);                               // same seed, same numbers
  EXPECT_LT(l1.back(), l1.front() - 0.5);          // 26 letters: learns the unigram quickly
}

TEST(Trainer, NaNStopsWithStatusFailedAndTheStep) {
  auto docs = synthetic_docs(2, 200, 6);
  RecurrentLM m = Mamba2LM(tiny_byte());
  {
    torch::NoGradGuard ng;
    m->named_parameters()["backbone.norm_f.weight"].fill_(std::nan(""));
  }
  TrainOptions o;
  o.steps = 5; o.batch = 2; o.T = 16;
  auto policy = make_policy(PolicySpec{}, 0);
  auto r = train(m, docs, *policy, o);
  EXPECT_EQ(r.status, "failed");
  EXPECT_NE(r.message.find("step 1"), std::string::npos) << r.message;
  EXPECT_EQ(r.steps_done, 0);
}

TEST(Trainer, CancelStopsAfterTheCurrentStep) {
  auto docs = synthetic_docs(2, 200, 7);
  RecurrentLM m = Mamba2LM(tiny_byte());
  TrainOptions o;
  o.steps = 50; o.batch = 2; o.T = 16;
  PolicySpec ps;
  ps.kind = "fitted";
  auto policy = make_policy(ps, 0);
  auto r = train(m, docs, *policy, o, [](const StepInfo& s) { return s.step < 3; });
  EXPECT_EQ(r.status, "cancelled");
  EXPECT_EQ(r.steps_done, 3);
  EXPECT_TRUE(policy->fitted_mean().defined());  // calibrated before step 1, then updated
}

// Fitted noise with fit_length: the fit comes from zero-state windows of that length, made once
// before step 1 and then kept, while the paper's fit (fit_length 0) follows the training windows.
TEST(Trainer, FittedNoiseAtALongerLengthIsFittedOnceToThoseStates) {
  auto docs = synthetic_docs(3, 400, 11);
  auto fitted_after = [&](int64_t fit_length, int64_t steps) {
    RecurrentLM m = Mamba2LM(tiny_byte());
    m->reset_parameters(3);
    TrainOptions o;
    o.steps = steps; o.batch = 4; o.T = 16; o.lr = 2e-3; o.warmup = 1; o.seed = 2;
    PolicySpec ps;
    ps.kind = "fitted";
    ps.ema = 0.5;
    ps.calibration_batches = 2;
    ps.fit_length = fit_length;
    auto policy = make_policy(ps, 0);
    auto r = train(m, docs, *policy, o);
    EXPECT_EQ(r.status, "finished") << r.message;
    return std::make_pair(policy->fitted_mean().clone(), policy->fitted_std().clone());
  };
  auto [m0, s0] = fitted_after(0, 0);      // calibrated on 16-token windows
  auto [mL, sL] = fitted_after(256, 0);    // calibrated on 256-token windows
  auto [mL3, sL3] = fitted_after(256, 3);  // ... then three training steps
  auto [m03, s03] = fitted_after(0, 3);
  ASSERT_TRUE(sL.defined() && s0.defined());
  // States after 256 tokens are not those after 16: the long fit is another (here larger) Gaussian.
  EXPECT_GT(sL.mean().item<double>(), 1.2 * s0.mean().item<double>()) << sL << s0;
  // Fixed after calibration; the paper's fit moves with every training step.
  EXPECT_TRUE(torch::equal(mL3, mL) && torch::equal(sL3, sL));
  EXPECT_FALSE(torch::equal(s03, s0));
  PolicySpec labelled;
  labelled.kind = "fitted";
  labelled.fit_length = 2048;
  EXPECT_EQ(labelled.label(), "fitted(L=2048)");
  // A length no document reaches is refused, naming it.
  RecurrentLM m = Mamba2LM(tiny_byte());
  PolicySpec ps;
  ps.kind = "fitted";
  ps.fit_length = 5000;
  auto policy = make_policy(ps, 0);
  TrainOptions o;
  o.steps = 1; o.batch = 2; o.T = 16;
  try {
    train(m, docs, *policy, o);
    FAIL() << "fit_length 5000 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fit_length 5000"), std::string::npos) << e.what();
  }
  ps.fit_length = -1;
  EXPECT_THROW(make_policy(ps, 0), Error);
}

// A run stopped at step k and resumed from its checkpoint gives exactly the numbers of a run that
// never stopped: model, optimizer, data order and policy state all survive.
TEST(Trainer, ResumeFromCheckpointIsExact) {
  auto docs = synthetic_docs(3, 300, 8);
  TrainOptions o;
  o.steps = 10; o.batch = 4; o.T = 16; o.lr = 2e-3; o.warmup = 2; o.seed = 5;
  for (const char* kind : {"tbtt", "fitted", "random"}) {
    SCOPED_TRACE(kind);
    PolicySpec ps;
    ps.kind = kind;
    ps.sigma = 0.3;
    RecurrentLM straight = Mamba2LM(tiny_byte());
    straight->reset_parameters(2);
    auto p1 = make_policy(ps, 9);
    auto full = train(straight, docs, *p1, o);

    const auto dir = (std::filesystem::temp_directory_path() / ("statescope_ckpt_" + std::string(kind))).string();
    std::filesystem::remove_all(dir);
    RecurrentLM a = Mamba2LM(tiny_byte());
    a->reset_parameters(2);
    auto p2 = make_policy(ps, 9);
    auto first = train(a, docs, *p2, o, [](const StepInfo& s) { return s.step < 4; }, {dir, 0, false});
    ASSERT_EQ(first.status, "cancelled");
    RecurrentLM b = Mamba2LM(tiny_byte());  // a fresh process: new model, new policy, all from the checkpoint
    b->reset_parameters(77);
    auto p3 = make_policy(ps, 1234);
    auto rest = train(b, docs, *p3, o, {}, {dir, 3, true});
    ASSERT_EQ(rest.status, "finished");
    EXPECT_EQ(rest.resumed_from, 4);
    ASSERT_EQ(rest.history.size(), 6u);
    for (size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(rest.history[i].loss, full.history[4 + i].loss) << "step " << 5 + i;
    auto pb = b->named_parameters();
    for (auto& p : straight->named_parameters()) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
  }
}

TEST(Trainer, OptionsOutOfRangeAreRefusedByName) {
  // The CLI flags land here unchecked (--grad-clip nan, --warmup -3 were accepted).
  auto docs = synthetic_docs(2, 200, 6);
  RecurrentLM m = Mamba2LM(tiny_byte());
  auto policy = make_policy(PolicySpec{}, 0);
  auto why = [&](const std::function<void(TrainOptions&)>& edit) {
    TrainOptions o;
    o.steps = 1; o.batch = 2; o.T = 16;
    edit(o);
    return test::error_of([&] { train(m, docs, *policy, o); });
  };
  EXPECT_EQ(why([](TrainOptions& o) { o.grad_clip = std::nan(""); }),
            "training option grad_clip (--grad-clip; posttrain.grad_clip in a spec) must be in [0, 1e6] (0: no clipping), "
            "got nan");
  EXPECT_EQ(why([](TrainOptions& o) { o.warmup = -3; }),
            "training option warmup (--warmup; posttrain.warmup in a spec) must be in [0, 1e9], got -3");
  EXPECT_EQ(why([](TrainOptions& o) { o.min_lr_ratio = 2; }),
            "training option min_lr_ratio (--min-lr-ratio; posttrain.min_lr_ratio in a spec) must be in [0, 1], got 2");
  EXPECT_EQ(why([](TrainOptions& o) { o.lr = std::numeric_limits<double>::infinity(); }),
            "training option lr (--lr; posttrain.lr in a spec) must be in (0, 10], got inf");
  EXPECT_EQ(why([](TrainOptions& o) { o.T = 0; }), "training option T (--T; T in a spec) must be >= 2, got 0");
  EXPECT_EQ(why([](TrainOptions& o) { o.lr = 1e308; }),
            "training option lr (--lr; posttrain.lr in a spec) must be in (0, 10], got 1e+308");
  EXPECT_EQ(why([](TrainOptions&) {}), "(no error)");
}
