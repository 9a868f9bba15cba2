// test_eval.cpp — streamed per-position evaluation: segment size does not change the numbers,
// the windowed reference is what it claims, the excess is exactly 0 below T, norms are right.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

#include "core/model/checkpoint.h"
#include "core/base/error.h"
#include "core/model/intervention.h"
#include "core/model/model_registry.h"
#include "core/analyses/eval/evaluate.h"
#include "tests/test_util.h"

using namespace statescope;
using statescope::test::close;

namespace {

struct Fixture {
  RecurrentLM model{nullptr};
  std::vector<Document> docs;
  Fixture() {
    Mamba2Config c;
    c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
    model = Mamba2LM(c);
    model->reset_parameters(3, 0.05, 0.5);  // slow decay: long memory, so resets matter
    model->to(torch::kFloat64);
    std::mt19937_64 rng(1);
    for (int d = 0; d < 3; ++d) {
      std::vector<int32_t> ids;
      for (int t = 0; t < 500; ++t) ids.push_back(static_cast<int32_t>(rng() % 256));
      docs.push_back({"d", ids});
    }
  }
};

torch::Tensor vec(const std::vector<double>& v) { return torch::tensor(v, torch::kFloat64); }

}  // namespace

TEST(Eval, SegmentSizeDoesNotChangeTheResult) {
  Fixture f;
  EvalOptions a;
  a.T = 16; a.length = 150; a.sequences = 5; a.batch = 2; a.segment = 150;
  EvalOptions b = a;
  b.segment = 7;  // state carried across 22 segments
  auto ra = evaluate_positions(f.model, f.docs, a), rb = evaluate_positions(f.model, f.docs, b);
  EXPECT_TRUE(close(vec(rb.nll), vec(ra.nll), 1e-9, "nll"));
  EXPECT_TRUE(close(vec(rb.norm), vec(ra.norm), 1e-9, "norm"));
  EXPECT_TRUE(close(vec(rb.norm_per_head), vec(ra.norm_per_head), 1e-9, "norm per head"));
  EXPECT_TRUE(close(vec(rb.windowed_nll), vec(ra.windowed_nll), 1e-9, "windowed"));
}

TEST(Eval, WindowedReferenceAndExcess) {
  Fixture f;
  EvalOptions o;
  o.T = 16; o.length = 100; o.sequences = 1; o.batch = 1; o.segment = 64;
  auto r = evaluate_positions(f.model, f.docs, o);
  // Exactly zero below T.
  for (int64_t p = 0; p < o.T; ++p) EXPECT_EQ(r.nll[p], r.windowed_nll[p]) << p;
  // Recompute a few positions by hand: position p uses the window starting at (p/8 - 1)*8.
  auto seq = eval_sequences(f.docs, o.length, 1)[0];
  auto toks = torch::tensor(std::vector<int64_t>(seq.begin(), seq.end()), torch::kInt64);
  torch::NoGradGuard ng;
  for (int64_t p : {16, 23, 24, 57, 99}) {
    const int64_t s = (p / 8 - 1) * 8;
    auto w = toks.narrow(0, s, p - s + 2).unsqueeze(0);
    auto logits = f.model->forward(w.narrow(1, 0, p - s + 1)).logits[0][p - s];
    const double nll = -torch::log_softmax(logits, -1)[toks[p + 1].item<int64_t>()].item<double>();
    EXPECT_NEAR(r.windowed_nll[p], nll, 1e-5) << "position " << p;
    EXPECT_GE(p - s + 1, o.T / 2 + 1);
    EXPECT_LE(p - s + 1, o.T);
  }
  // With long memory the reset changes the loss past T (the test would be vacuous otherwise).
  double diff = 0;
  for (int64_t p = o.T; p < o.length; ++p) diff += std::abs(r.nll[p] - r.windowed_nll[p]);
  EXPECT_GT(diff, 1e-3);
}

TEST(Eval, NormsMatchTheModelsOwnNorms) {
  Fixture f;
  EvalOptions o;
  o.T = 16; o.length = 40; o.sequences = 2; o.batch = 2; o.segment = 13; o.windowed = false;
  auto r = evaluate_positions(f.model, f.docs, o);
  auto seqs = eval_sequences(f.docs, o.length, 2);
  std::vector<int64_t> flat;
  for (auto& s : seqs) flat.insert(flat.end(), s.begin(), s.begin() + o.length);
  auto toks = torch::tensor(flat, torch::kInt64).view({2, o.length});
  torch::NoGradGuard ng;
  ForwardOptions fo;
  fo.state_norms = true;
  auto out = f.model->forward(toks, nullptr, fo);
  EXPECT_TRUE(close(vec(r.norm).view({2, o.length}), out.norm.mean(1), 1e-9, "layer norm"));
  EXPECT_TRUE(r.windowed_nll.empty());
}

TEST(Eval, TooLittleTextIsRefused) {
  Fixture f;
  try {
    eval_sequences(f.docs, 1000, 5);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("room for 1 sequences"), std::string::npos) << e.what();
  }
}

// What grows with the length is sized before it is allocated: under a budget too small for the
// per-sequence tables and the per-position norms, refused with the sizes; without the norms it fits.
TEST(Eval, TheTablesThatGrowWithLengthAreBudgeted) {
  Fixture f;
  EvalOptions o;
  o.T = 8, o.length = 64, o.sequences = 2, o.segment = 32, o.batch = 2;
  ::setenv("STATESCOPE_MEMORY_BUDGET", "2000", 1);  // bytes
  std::string msg;
  try {
    evaluate_positions(f.model, f.docs, o);
  } catch (const Error& e) {
    msg = e.what();
  }
  o.norms = false;
  std::string without;
  try {
    evaluate_positions(f.model, f.docs, o);  // 2 x 64 x 12 bytes = 1536: within
  } catch (const Error& e) {
    without = e.what();
  }
  ::unsetenv("STATESCOPE_MEMORY_BUDGET");
  EXPECT_NE(msg.find("evaluation of 2 sequences x 64 positions"), std::string::npos) << msg;
  EXPECT_EQ(without, "") << without;
}

// Logits that overflow (finite weights, but a final norm of 1e38) are said by position, not averaged in.
TEST(Eval, NonFiniteLossIsSaidNotAveraged) {
  Fixture f;
  EvalOptions o;
  o.T = 16; o.length = 64; o.sequences = 2; o.batch = 2; o.segment = 32;
  EXPECT_NO_THROW(evaluate_positions(f.model, f.docs, o));
  {
    torch::NoGradGuard ng;
    for (auto& p : f.model->named_parameters())
      if (p.key().find("norm_f") != std::string::npos) p.value().fill_(1e300);
  }
  try {
    evaluate_positions(f.model, f.docs, o);
    FAIL() << "no error for overflowing logits";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("loss is not finite"), std::string::npos) << m;
    EXPECT_NE(m.find("at position 0 of sequence 0"), std::string::npos) << m;
  }
}

// The committed embedded model must show the failure the paper is about (data/models/embedded).
TEST(Eval, EmbeddedModelFailsPastItsTrainingContext) {
  auto model = load_model_dir(resolve_model("embedded"), default_compute());
  auto corpus = load_austen(default_corpus_path());
  EvalOptions o;
  o.T = 32; o.length = 1024; o.sequences = 8; o.segment = 256; o.batch = 8;
  auto r = evaluate_positions(model, corpus.validation, o);
  double near = 0, far = 0, norm_T = 0, norm_far = 0;
  for (int64_t p = 64; p < 128; ++p) near += (r.nll[p] - r.windowed_nll[p]) / 64;
  for (int64_t p = 512; p < 1024; ++p) far += (r.nll[p] - r.windowed_nll[p]) / 512;
  for (int64_t l = 0; l < r.n_layer; ++l) {
    norm_T += r.norm[l * 1024 + 31];
    for (int64_t p = 512; p < 1024; ++p) norm_far += r.norm[l * 1024 + p] / 512;
  }
  std::cout << "[embedded] excess 64-128: " << near / std::log(2.0) << " bits/byte, 512-1024: " << far / std::log(2.0)
            << " bits/byte, norm far/T: " << norm_far / norm_T << "\n";
  EXPECT_GT(far / std::log(2.0), 0.15);  // clearly worse far past T than the state-reset reference
  EXPECT_GT(far / std::log(2.0), near / std::log(2.0) + 0.1);  // and growing with position
  EXPECT_GT(norm_far / norm_T, 2.0);     // the state norm keeps growing
}

// ForwardOptions::logits_from (the state-reset windows' warm-up half gets no LM head): the logits it
// returns are the full forward's from that position on, in one span and across a state reset every
// k tokens; outside [0, L] it is refused by name.
TEST(Eval, LogitsFromGivesTheFullForwardsLastPositions) {
  Fixture fx;
  auto tok = torch::randint(0, 256, {2, 37}, torch::kInt64);
  const auto full = fx.model->forward(tok).logits;  // [2, 37, 256]
  ForwardOptions o = fx.model->forward_options(0);
  o.logits_from = 13;
  const auto part = fx.model->forward(tok, nullptr, o).logits;
  ASSERT_EQ(part.sizes(), (std::vector<int64_t>{2, 24, 256}));
  EXPECT_TRUE(torch::allclose(part, full.narrow(1, 13, 24), 1e-10, 1e-10));
  Intervention reset;
  reset.reset_period = 8;
  o.intervention = &reset;
  ForwardOptions all = o;
  all.logits_from = 0;
  EXPECT_TRUE(torch::allclose(fx.model->forward(tok, nullptr, o).logits,
                              fx.model->forward(tok, nullptr, all).logits.narrow(1, 13, 24), 1e-10, 1e-10));
  o.logits_from = 38;
  try {
    fx.model->forward(tok, nullptr, o);
    ADD_FAILURE() << "logits_from past the end was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("logits_from 38 outside [0, 37]"), std::string::npos) << e.what();
  }
}

// ForwardOptions::delta_norms false (what the evaluation asks): the same state norms, bit for bit, on
// the CPU fast path and ATen's, from a non-zero initial state, and no delta norms.
TEST(Eval, StateNormsWithoutDeltaNormsAreTheSame) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 12; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;  // 12: a tail
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(5);
  torch::NoGradGuard ng;
  auto tok = torch::randint(0, 256, {3, 29}, torch::kInt64);
  const ModelState h0 = m->forward(torch::randint(0, 256, {3, 11}, torch::kInt64)).final_state;
  for (ScanImpl scan : {ScanImpl::Fused, ScanImpl::Chunked}) {
    ForwardOptions with = m->forward_options(0);
    with.scan = scan, with.state_norms = true;
    ForwardOptions without = with;
    without.delta_norms = false;
    const auto a = m->forward(tok, &h0, with), b = m->forward(tok, &h0, without);
    EXPECT_TRUE(torch::equal(a.norm_per_head, b.norm_per_head));
    EXPECT_TRUE(torch::equal(a.logits, b.logits));
    EXPECT_TRUE(a.delta_norm.defined());
    EXPECT_FALSE(b.delta_norm.defined());
  }
}
