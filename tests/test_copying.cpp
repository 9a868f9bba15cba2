// test_copying.cpp — copying samples and packed windows have the promised format, scores are
// exact on hand-made answers, evaluation agrees with an independent greedy loop over full
// forwards, and training runs with and without state passing.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/analyses/copying.h"
#include "core/base/error.h"

using namespace statescope;

TEST(Copying, SampleFormat) {
  std::mt19937_64 rng(5);
  for (int64_t n : {1, 7, 40}) {
    auto s = make_copy_sample(n, 4, rng);
    ASSERT_EQ(static_cast<int64_t>(s.size()), 2 * n + 2);
    EXPECT_EQ(s[n], '|');
    EXPECT_EQ(s.back(), '\n');
    EXPECT_EQ(s.substr(0, n), s.substr(n + 1, n));
    for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(s[i] >= 'a' && s[i] < 'a' + 4) << s;
  }
  EXPECT_THROW(make_copy_sample(3, 1, rng), Error);
  EXPECT_THROW(make_copy_sample(3, 27, rng), Error);
  EXPECT_THROW(make_copy_sample(0, 5, rng), Error);
}

TEST(Copying, TrainingWindowsArePackedWholeSamples) {
  const int64_t L = 6, window = 24;
  auto docs = copy_training_docs(20, window, L, 5, 3);
  ASSERT_EQ(docs.size(), 20u);
  for (auto& d : docs) {
    ASSERT_EQ(static_cast<int64_t>(d.tokens.size()), window + 1);
    std::string t(d.tokens.begin(), d.tokens.end());
    size_t at = 0;
    int complete = 0;
    while (true) {  // every complete line is "s|s" with 1 <= |s| <= L
      const size_t nl = t.find('\n', at);
      if (nl == std::string::npos) break;
      const std::string line = t.substr(at, nl - at);
      const size_t bar = line.find('|');
      ASSERT_NE(bar, std::string::npos) << line;
      EXPECT_GE(bar, 1u);
      EXPECT_LE(static_cast<int64_t>(bar), L);
      EXPECT_EQ(line.substr(0, bar), line.substr(bar + 1)) << line;
      ++complete;
      at = nl + 1;
    }
    EXPECT_GE(complete, 1);
  }
  EXPECT_THROW(copy_training_docs(1, 2 * L + 1, L, 5, 3), Error);  // the longest sample would not fit
}

TEST(Copying, ScoresOnHandMadeAnswers) {
  // 3 samples of 4 tokens: all right, one wrong, all wrong.
  std::vector<int32_t> target{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4};
  std::vector<int32_t> answer{1, 2, 3, 4, 1, 2, 9, 4, 0, 0, 0, 0};
  auto [exact, tok] = score_copies(answer, target, 3, 4);
  EXPECT_DOUBLE_EQ(exact, 1.0 / 3);
  EXPECT_DOUBLE_EQ(tok, (1.0 + 0.75 + 0.0) / 3);
  EXPECT_THROW(score_copies(answer, target, 2, 4), Error);
}

TEST(Copying, EvaluationAgreesWithIndependentGreedyLoop) {
  Mamba2Config c = default_copy_model();
  c.d_model = 32; c.d_state = 8; c.headdim = 8; c.chunk_size = 16;
  Mamba2LM m(c);
  m->reset_parameters(11);
  m->to(torch::kFloat64);
  const int64_t samples = 4, alphabet = 3;
  // A random model copies nothing; bias its output towards 'b' so that some tokens are right and
  // the scoring has something to count.
  {
    torch::NoGradGuard ng;
    m->output_weight()[static_cast<int>('b')].mul_(0).add_(m->output_weight()[static_cast<int>('|')]).mul_(5);
  }
  auto r = evaluate_copying(m, {3, 5}, alphabet, samples, 42);
  ASSERT_EQ(r.exact.size(), 2u);
  std::mt19937_64 rng(42);
  torch::NoGradGuard ng;
  for (int li = 0; li < 2; ++li) {
    const int64_t n = r.lengths[li];
    double right = 0, exact = 0;
    for (int64_t i = 0; i < samples; ++i) {
      const std::string s = make_copy_sample(n, alphabet, rng);
      auto seq = torch::empty({1, n + 1}, torch::kInt64);
      for (int64_t k = 0; k <= n; ++k) seq[0][k] = static_cast<unsigned char>(s[k]);
      int64_t ok = 0;
      for (int64_t k = 0; k < n; ++k) {
        auto next = m->forward(seq).logits.select(1, seq.size(1) - 1).argmax(-1, true);  // [1, 1]
        ok += next.item<int64_t>() == static_cast<unsigned char>(s[k]);
        seq = torch::cat({seq, next}, 1);
      }
      right += static_cast<double>(ok) / n;
      exact += ok == n;
    }
    EXPECT_DOUBLE_EQ(r.token_accuracy[li], right / samples) << "length " << n;
    EXPECT_DOUBLE_EQ(r.exact[li], exact / samples) << "length " << n;
  }
}

TEST(Copying, TrainsWithAndWithoutStatePassing) {
  CopyOptions o;
  o.L = 4;
  o.alphabet = 4;
  o.train_docs = 64;
  o.eval_samples = 8;
  o.model = default_copy_model();
  o.model.d_model = 32; o.model.d_state = 8; o.model.headdim = 8; o.model.chunk_size = 16;
  TrainOptions t;
  t.steps = 12; t.batch = 8; t.lr = 3e-3;
  for (const char* kind : {"zero", "passing"}) {
    PolicySpec ps;
    ps.kind = kind;
    auto r = run_copying(o, ps, t);
    ASSERT_EQ(r.train.status, "finished") << kind;
    ASSERT_EQ(r.train.history.size(), 12u);
    EXPECT_LT(r.train.history.back().loss, r.train.history.front().loss) << kind;
    EXPECT_EQ(r.result.lengths, (std::vector<int64_t>{2, 4, 6, 8, 12, 16}));
    EXPECT_EQ(r.result.T, 16);
    for (size_t i = 0; i < r.result.lengths.size(); ++i)
      EXPECT_TRUE(r.result.exact[i] >= 0 && r.result.exact[i] <= r.result.token_accuracy[i] && r.result.token_accuracy[i] <= 1);
  }
  // Post-training setting: zero-state pre-training, then the policy; steps count on.
  o.pretrain_steps = 5;
  PolicySpec passing;
  passing.kind = "passing";
  auto pt = run_copying(o, passing, t);
  ASSERT_EQ(pt.train.status, "finished");
  ASSERT_EQ(pt.train.history.size(), 17u);
  EXPECT_EQ(pt.train.history[5].step, 6);
  EXPECT_EQ(pt.train.history.back().step, 17);
  o.pretrain_steps = 0;
  // Cancelling stops before evaluation.
  PolicySpec zero;
  auto c = run_copying(o, zero, t, [](const StepInfo& s) { return s.step < 3; });
  EXPECT_EQ(c.train.status, "cancelled");
  EXPECT_TRUE(c.result.lengths.empty());
}
