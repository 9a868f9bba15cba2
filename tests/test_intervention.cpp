// test_intervention.cpp — training-free interventions (core/model/intervention.h,
// core/train/intervention_calibration.h): knobs at their identity change no logit, bit for bit; a
// reset every k tokens is k-token pieces each from the zero state, and a forward in segments that
// passes its positions equals one pass; A scaled by f is the model with A_log + log f; dt scaled
// from a position leaves every logit before it alone and scales the log decay after it; clipping
// bounds every head's norm, and on its own calibration windows changes nothing; LongMamba filters
// exactly the tokens below each global channel's threshold; knobs out of range are refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

#include "core/base/error.h"
#include "core/experiment/spec.h"
#include "core/model/intervention.h"
#include "core/model/mamba1/model.h"
#include "core/model/mamba2/model.h"
#include "core/train/intervention_calibration.h"
#include "core/train/samplers.h"
#include "tests/error_text.h"
#include "tests/test_util.h"

using namespace statescope;

namespace {

RecurrentLM tiny_mamba2(uint64_t seed = 1) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 64; c.chunk_size = 8;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(seed);
  m->eval();
  return m;
}

RecurrentLM tiny_mamba1(uint64_t seed = 1) {
  Mamba1Config c;
  c.d_model = 16; c.n_layer = 2; c.d_state = 4; c.vocab_size = 64;
  RecurrentLM m = Mamba1LM(c);
  m->reset_parameters(seed);
  m->eval();
  return m;
}

std::vector<Document> random_docs(int n, int vocab, uint64_t seed = 5) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ids;
  for (int t = 0; t < n; ++t) ids.push_back(static_cast<int32_t>(rng() % vocab));
  return {{"d", ids}};
}

torch::Tensor tokens(int64_t b, int64_t L, uint64_t seed = 3) {
  torch::manual_seed(seed);
  return torch::randint(0, 64, {b, L}, torch::kInt64);
}

InterventionSpec spec_of(const std::string& kind) {
  InterventionSpec s;
  s.kind = kind;
  return s;
}

ForwardOutput run(RecurrentLM& m, const torch::Tensor& tok, const Intervention* iv, ScanImpl scan, int64_t position = 0,
                  const ModelState* init = nullptr) {
  torch::NoGradGuard ng;
  ForwardOptions o;
  o.scan = scan;
  o.intervention = iv;
  o.position = position;
  o.state_norms = true;
  o.log_decay = true;
  return m->forward(tok, init, o);
}

bool same(const torch::Tensor& a, const torch::Tensor& b) { return a.sizes() == b.sizes() && torch::equal(a, b); }

// a and b differ somewhere by more than `rel` of b's largest magnitude.
bool differs(const torch::Tensor& a, const torch::Tensor& b, double rel) {
  return ((a - b).abs().max() > rel * b.abs().max()).item<bool>();
}

}  // namespace

TEST(Intervention, KnobsAtTheirIdentityChangeNoLogit) {
  const auto docs = random_docs(4000, 64);
  for (auto make : {&tiny_mamba2, &tiny_mamba1}) {
    RecurrentLM m = make(1);
    const auto tok = tokens(2, 29);
    const ScanImpl scan = m->architecture() == "mamba2" ? ScanImpl::Chunked : ScanImpl::Sequential;
    const auto plain = run(m, tok, nullptr, scan);
    InterventionSpec dt = spec_of("dt_scale");
    dt.per = "head";
    dt.factors.assign(static_cast<size_t>(2 * m->state_layout().groups), 1.0);
    InterventionSpec a = spec_of("a_scale");
    a.per = "layer";
    a.factors = {1.0, 1.0};
    InterventionSpec reset = spec_of("reset");
    reset.period = 30;  // longer than the sequence
    for (const auto& s : {dt, a, reset}) {
      auto iv = resolve_intervention(s, m, docs, 16, 0);
      const auto got = run(m, tok, iv.get(), scan);
      EXPECT_TRUE(same(got.logits, plain.logits)) << m->architecture() << " " << s.label();
      EXPECT_TRUE(same(got.norm_per_head, plain.norm_per_head)) << m->architecture() << " " << s.label();
      EXPECT_TRUE(same(got.final_state[1].ssm, plain.final_state[1].ssm)) << m->architecture() << " " << s.label();
    }
    // The run's own fast path (CPU loops) with a reset longer than the sequence: the same path, bit for bit.
    auto iv = resolve_intervention(reset, m, docs, 16, 0);
    EXPECT_TRUE(same(run(m, tok, iv.get(), ScanImpl::Fused).logits, run(m, tok, nullptr, ScanImpl::Fused).logits));
  }
}

TEST(Intervention, ResetEveryKIsPiecesFromTheZeroStateAndSegmentsPassTheirPosition) {
  const auto docs = random_docs(4000, 64);
  for (auto make : {&tiny_mamba2, &tiny_mamba1}) {
    RecurrentLM m = make(2);
    const auto tok = tokens(2, 17);
    InterventionSpec s = spec_of("reset");
    s.period = 5;
    auto iv = resolve_intervention(s, m, docs, 16, 0);
    const auto whole = run(m, tok, iv.get(), ScanImpl::Chunked);
    for (int64_t a = 0; a < 17; a += 5) {
      const int64_t n = std::min<int64_t>(5, 17 - a);
      const auto piece = run(m, tok.narrow(1, a, n), nullptr, ScanImpl::Chunked);
      EXPECT_TRUE(same(whole.logits.narrow(1, a, n), piece.logits)) << m->architecture() << " piece at " << a;
      EXPECT_TRUE(same(whole.norm_per_head.narrow(2, a, n), piece.norm_per_head)) << m->architecture() << " at " << a;
    }
    // Two segments cut off the multiples (7 | 10) with the state and position handed over.
    const auto first = run(m, tok.narrow(1, 0, 7), iv.get(), ScanImpl::Chunked);
    const auto second = run(m, tok.narrow(1, 7, 10), iv.get(), ScanImpl::Chunked, 7, &first.final_state);
    // (the chunked scan's chunks fall elsewhere in the piece 5..10 cut at 7: equal to rounding)
    EXPECT_TRUE(test::close(torch::cat({first.logits, second.logits}, 1), whole.logits, 1e-5, m->architecture() + " segments"));
    EXPECT_TRUE(test::close(second.final_state[0].ssm, whole.final_state[0].ssm, 1e-5, m->architecture() + " state"));
  }
}

TEST(Intervention, AScaledByFIsTheModelWithLogAPlusLogF) {
  const auto docs = random_docs(4000, 64);
  for (auto make : {&tiny_mamba2, &tiny_mamba1}) {
    RecurrentLM m = make(3), shifted = make(3);
    const std::vector<double> f{0.5, 1.7};
    {
      torch::NoGradGuard ng;
      int64_t l = 0;
      for (auto& p : shifted->named_parameters())
        if (p.key().find("A_log") != std::string::npos) p.value().add_(std::log(f[static_cast<size_t>(l++)]));
      ASSERT_EQ(l, 2);
    }
    InterventionSpec s = spec_of("a_scale");
    s.per = "layer";
    s.factors = f;
    auto iv = resolve_intervention(s, m, docs, 16, 0);
    const auto tok = tokens(2, 23);
    const ScanImpl scan = m->architecture() == "mamba2" ? ScanImpl::Chunked : ScanImpl::Sequential;
    const auto got = run(m, tok, iv.get(), scan), want = run(shifted, tok, nullptr, scan);
    EXPECT_TRUE(test::close(got.logits, want.logits, 1e-5, m->architecture() + " logits"));
    EXPECT_TRUE(test::close(got.log_decay, want.log_decay, 1e-6, m->architecture() + " log decay"));
    // (a tiny random model's logits barely feel its SSM: the state shows the change)
    EXPECT_TRUE(differs(got.norm_per_head, run(m, tok, nullptr, scan).norm_per_head, 0.05)) << m->architecture();
  }
}

TEST(Intervention, DtScaledFromAPositionLeavesEveryEarlierLogitAndScalesTheLogDecayAfter) {
  const auto docs = random_docs(4000, 64);
  for (auto make : {&tiny_mamba2, &tiny_mamba1}) {
    RecurrentLM m = make(4);
    InterventionSpec s = spec_of("dt_scale");
    s.factors = {0.25};
    s.from_T = true;
    auto iv = resolve_intervention(s, m, docs, /*T=*/11, 0);
    ASSERT_EQ(iv->dt_from, 11);
    const auto tok = tokens(2, 26);
    const ScanImpl scan = m->architecture() == "mamba2" ? ScanImpl::Chunked : ScanImpl::Sequential;
    const auto plain = run(m, tok, nullptr, scan), got = run(m, tok, iv.get(), scan);
    EXPECT_TRUE(test::close(got.logits.narrow(1, 0, 11), plain.logits.narrow(1, 0, 11), 1e-6, "before T"));
    EXPECT_TRUE(test::close(got.norm_per_head.narrow(2, 0, 11), plain.norm_per_head.narrow(2, 0, 11), 1e-6, "norms before T"));
    EXPECT_TRUE(differs(got.norm_per_head.narrow(2, 11, 15), plain.norm_per_head.narrow(2, 11, 15), 0.05)) << m->architecture();
    // Past T every token's log decay in layer 0 is a quarter of the model's (dt A averaged over a group
    // is linear in dt; later layers' dt depend on what layer 0 now writes).
    EXPECT_TRUE(test::close(got.log_decay[0].narrow(1, 11, 15), plain.log_decay[0].narrow(1, 11, 15) * 0.25, 1e-6, "decay"));
    EXPECT_TRUE(test::close(got.log_decay.narrow(2, 0, 11), plain.log_decay.narrow(2, 0, 11), 1e-7, "decay before T"));
    // In segments that pass their positions (the factor starts inside the second).
    const auto a = run(m, tok.narrow(1, 0, 8), iv.get(), scan);
    const auto b = run(m, tok.narrow(1, 8, 18), iv.get(), scan, 8, &a.final_state);
    EXPECT_TRUE(test::close(torch::cat({a.logits, b.logits}, 1), got.logits, 1e-5, "segments"));
  }
}

TEST(Intervention, ClipBoundsEveryGroupsNormAndChangesNothingOnItsOwnCalibrationWindows) {
  const auto docs = random_docs(6000, 64);
  for (auto make : {&tiny_mamba2, &tiny_mamba1}) {
    RecurrentLM m = make(5);
    InterventionSpec s = spec_of("clip");
    s.windows = 8;
    auto iv = resolve_intervention(s, m, docs, /*T=*/12, /*seed=*/7);
    // The calibration windows again: no state there exceeds the largest it measured.
    WindowSampler sampler(docs, 12, 7);
    const auto cal = sampler.next(8).narrow(1, 0, 12);
    const auto plain = run(m, cal, nullptr, ScanImpl::Sequential), got = run(m, cal, iv.get(), ScanImpl::Chunked);
    EXPECT_TRUE(test::close(got.logits, plain.logits, 1e-6, m->architecture() + " calibration windows"));
    // A bound a tenth of it: every group's norm at every position stays under it, and the logits move.
    s.margin = 0.1;
    auto tight = resolve_intervention(s, m, docs, 12, 7);
    const auto tok = tokens(2, 40);
    const auto clipped = run(m, tok, tight.get(), ScanImpl::Chunked);
    for (int64_t l = 0; l < 2; ++l) {
      auto bound = tight->layers[static_cast<size_t>(l)].max_norm.to(torch::kFloat32).view({1, 1, -1});
      EXPECT_TRUE((clipped.norm_per_head[l] <= bound * (1 + 1e-5)).all().item<bool>()) << m->architecture() << " layer " << l;
      EXPECT_GT(tight->layers[static_cast<size_t>(l)].max_norm.min().item<double>(), 0.0);
    }
    EXPECT_TRUE(differs(clipped.final_state[1].ssm, run(m, tok, nullptr, ScanImpl::Sequential).final_state[1].ssm, 0.05))
        << m->architecture();
  }
}

TEST(Intervention, KnobsOutOfRangeAndShapesThatDoNotFitAreRefusedByName) {
  auto spec_error = [](const std::string& iv) {
    return test::error_of([&] {
      parse_spec(R"({"model": "embedded", "baseline": true, "interventions": [)" + iv + "]}", "s.json");
    });
  };
  EXPECT_NE(spec_error(R"({"kind": "dt_scale", "factor": 0})").find("factor must be in (0, 1e6], got 0"), std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "dt_scale", "factor": -1})").find("interventions[0]"), std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "reset", "period": 0})").find("period must be >= 1, got 0"), std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "reset"})").find("'interventions[].period' is required"), std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "clip", "windows": 0})").find("windows must be in [1, 100000]"), std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "clip", "margin": 0})").find("margin must be in (0, 1e6]"), std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "reset", "period": 4, "factor": 2})").find("'interventions[].factor' is not a knob of the reset"),
            std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "a_scale", "factor": [[1, 2]]})").find("A is rescaled per layer"), std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "warp"})").find("unknown intervention 'warp'"), std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "longmamba", "global_threshold": 1})").find("global_threshold must be in (0, 1)"),
            std::string::npos);
  EXPECT_NE(spec_error(R"({"kind": "longmamba", "clamp_top": 1})").find("clamp_top must be in [0, 1)"), std::string::npos);
  // Sizes against the model: per head needs layers x heads values.
  RecurrentLM m = tiny_mamba2();
  InterventionSpec s = spec_of("dt_scale");
  s.per = "head";
  s.factors = {1, 2, 3};
  const std::string e = test::error_of([&] { resolve_intervention(s, m, random_docs(100, 64), 16, 0); });
  EXPECT_NE(e.find("has 3 values per head, the model has 2 layers of 8 heads"), std::string::npos) << e;
}

TEST(Intervention, LongMambaFiltersExactlyTheTokensBelowEachGlobalChannelsThreshold) {
  const auto docs = random_docs(8000, 64);
  RecurrentLM m = tiny_mamba2(6);
  {  // head 0 of each layer remembers almost everything over T (global), the others forget (local)
    torch::NoGradGuard ng;
    for (auto& p : m->named_parameters())
      if (p.key().find("A_log") != std::string::npos) {
        p.value().fill_(std::log(1000.0));
        p.value()[0] = std::log(1e-4);
      }
  }
  InterventionSpec s = spec_of("longmamba");
  s.windows = 16;
  s.length = 128;   // 8T
  s.clamp_top = 0;  // so that the kept mass is T / length of the raw dt's (with a cap, of the capped)
  auto iv = resolve_intervention(s, m, docs, /*T=*/16, /*seed=*/2);
  for (int64_t l = 0; l < 2; ++l) {
    const auto& thr = iv->layers[static_cast<size_t>(l)].dt_threshold;
    EXPECT_GT(thr[0].item<double>(), 0.0) << "layer " << l << ": head 0 is global";
    EXPECT_EQ(thr.narrow(0, 1, thr.size(0) - 1).abs().sum().item<double>(), 0.0) << "layer " << l << ": the rest are local";
  }
  // On its calibration windows the kept dt mass of a global head is T / length of the whole (to one token).
  WindowSampler sampler(docs, 16, 2);
  const auto cal = sampler.next(16).narrow(1, 0, 16);
  const auto plain = run(m, cal, nullptr, ScanImpl::Chunked), got = run(m, cal, iv.get(), ScanImpl::Chunked);
  {  // layer 0 (what later layers read changes with it)
    const int64_t l = 0;
    // log_decay = dt * A per head: a filtered token has 0 there; every other value is the model's own.
    auto p = plain.log_decay[l].select(-1, 0), g = got.log_decay[l].select(-1, 0);  // [b, T]
    const double thr = iv->layers[static_cast<size_t>(l)].dt_threshold[0].item<double>();
    auto dt = p.to(torch::kFloat64) / -std::exp(std::log(1e-4));  // the head's dt (to float rounding)
    auto below = dt < thr * (1 - 1e-5), above = dt > thr * (1 + 1e-5);  // filtered / kept (dt > thr)
    ASSERT_GT(below.sum().item<int64_t>(), 0);
    ASSERT_GT(above.sum().item<int64_t>(), 0);
    EXPECT_TRUE(torch::equal(g.masked_select(below), torch::zeros_like(g.masked_select(below)))) << "layer " << l;
    EXPECT_TRUE(torch::allclose(g.masked_select(above), p.masked_select(above), 1e-5, 0)) << "kept";
    // The kept tokens carry about T / length of the dt mass (the threshold is read off the calibration
    // values stretched to `length` samples, so to within their sampling).
    const double frac = (g.sum() / p.sum()).item<double>();
    EXPECT_GT(frac, 0.75 * 16.0 / 128.0);
    EXPECT_LT(frac, 1.25 * 16.0 / 128.0);
    // Local heads run as the model does.
    EXPECT_TRUE(test::close(got.log_decay[l].narrow(-1, 1, 3), plain.log_decay[l].narrow(-1, 1, 3), 1e-7, "local"));
  }
  // Set for the training length itself, it filters nothing: every logit as the model's.
  s.length = 16;
  auto none = resolve_intervention(s, m, docs, 16, 2);
  EXPECT_TRUE(same(run(m, cal, none.get(), ScanImpl::Chunked).logits, plain.logits));
  // Mamba-1: per channel, the same rule.
  RecurrentLM m1 = tiny_mamba1(6);
  auto iv1 = resolve_intervention(s, m1, docs, 16, 2);
  EXPECT_EQ(iv1->layers[0].dt_threshold.size(0), m1->state_layout().ssm.front().size);
}
