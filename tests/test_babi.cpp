// test_babi.cpp — bAbI-style prompts have the exact length, end with the question, answer with
// the person's last fact, put facts at sentence ends and report the fact distance; evaluation's
// choice accuracy agrees with likelihoods computed by independent full forwards.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <regex>

#include "core/model/mamba2/model.h"
#include "core/analyses/babi/babi.h"
#include "core/base/error.h"
#include "core/data/tokenizer.h"
#include "tests/two_tokenizers.h"

using namespace statescope;

namespace {
std::string prose() {
  std::string p;
  for (int i = 0; i < 200; ++i) p += "It was a truth universally acknowledged. She said so! Did he? ";
  return p;
}
}  // namespace

TEST(Babi, PromptLengthQuestionAnswerAndDistance) {
  const std::string text = prose();
  std::mt19937_64 rng(7);
  const std::regex fact(" (Sandra|Daniel|Gertrude|Winston) (went to|moved to|journeyed to|travelled to) the ([a-z]+)\\.");
  for (int64_t L : {200, 500, 3000})
    for (int k = 0; k < 20; ++k) {
      auto s = make_babi(L, text, 4, rng);
      ASSERT_EQ(static_cast<int64_t>(s.prompt.size()), L);
      std::smatch q;
      ASSERT_TRUE(std::regex_search(s.prompt, q, std::regex(" Where is ([A-Za-z]+)\\? ([A-Za-z]+) is in the $")));
      const std::string who = q[1];
      EXPECT_EQ(q[2], who);
      // The answer is the location of the person's last fact; the distance is measured from its end.
      std::string last;
      int64_t end = -1, count = 0;
      for (auto it = std::sregex_iterator(s.prompt.begin(), s.prompt.end(), fact); it != std::sregex_iterator(); ++it) {
        ++count;
        const auto pos = it->position(0);
        const size_t after = pos + it->length(0);
        EXPECT_TRUE(pos == 0 || std::string(".!?").find(s.prompt[pos - 1]) != std::string::npos ||
                    s.prompt[after] == ' ')  // at a sentence end, or at least a word boundary
            << "fact not at a sentence end: ..." << s.prompt.substr(std::max<int64_t>(0, pos - 10), 20);
        if ((*it)[1] == who) last = (*it)[3], end = pos + it->length(0);
      }
      EXPECT_EQ(count, 4);
      EXPECT_EQ(s.answer, last);
      EXPECT_EQ(s.distance, L - end);
    }
  EXPECT_THROW(make_babi(100, text, 4, rng), Error);          // too short for 4 facts and the question
  EXPECT_THROW(make_babi(200, "Short.", 1, rng), Error);      // not enough prose
  EXPECT_THROW(make_babi(200, text, 0, rng), Error);
  auto docs = babi_training_docs(5, 256, 1, text, 3, 1);
  for (auto& d : docs) {  // one example of T tokens and a pad; only the answer word and "." are scored
    ASSERT_EQ(d.tokens.size(), 257u);
    std::string t(d.tokens.begin(), d.tokens.end() - 1);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(t, m, std::regex(" is in the ([a-z]+)\\.$"))) << t.substr(200);
    std::string scored;
    for (size_t i = 0; i < t.size(); ++i)
      if (d.loss_mask[i]) scored += t[i];
    EXPECT_EQ(scored, m[1].str() + ".");  // the answer and its full stop
    EXPECT_EQ(d.loss_mask[256], 0);
  }
}

TEST(Babi, ChoiceAccuracyAgreesWithFullForwardLikelihoods) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(5);
  m->to(torch::kFloat64);
  const std::string text = prose();
  const int64_t samples = 6, L = 220;
  auto r = evaluate_babi(m, {L}, text, 2, samples, 9);
  ASSERT_EQ(r.choice_accuracy.size(), 1u);
  EXPECT_EQ(r.candidates, 6);
  std::mt19937_64 rng(9);
  torch::NoGradGuard ng;
  double right = 0, dist = 0;
  for (int64_t i = 0; i < samples; ++i) {
    auto s = make_babi(L, text, 2, rng);
    dist += s.distance;
    double best = -1e300;
    std::string arg;
    for (auto& w : babi_locations()) {
      const std::string full = s.prompt + w;
      auto seq = torch::empty({1, static_cast<int64_t>(full.size())}, torch::kInt64);
      for (size_t k = 0; k < full.size(); ++k) seq[0][k] = static_cast<unsigned char>(full[k]);
      auto lp = torch::log_softmax(m->forward(seq).logits, -1);  // [1, n, V]
      double sc = 0;
      for (size_t k = 0; k < w.size(); ++k)
        sc += lp[0][L - 1 + k][static_cast<unsigned char>(w[k])].item<double>();
      if (sc > best) best = sc, arg = w;
    }
    right += arg == s.answer;
  }
  EXPECT_DOUBLE_EQ(r.choice_accuracy[0], right / samples);
  EXPECT_DOUBLE_EQ(r.mean_distance[0], dist / samples);
  EXPECT_TRUE(r.accuracy[0] >= 0 && r.accuracy[0] <= 1);
}


// BPE checkpoints: prompts of exactly L tokens, facts whole, the question at the end, the answer
// the person's last fact; training docs of window + 1 tokens ending with " location."; the grid runs.
TEST(Babi, BpePromptsCountTokens) {
  auto tok = load_tokenizer(std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/tokenizer");
  ASSERT_EQ(tok->kind(), "bpe");
  const std::string text = prose();
  std::mt19937_64 rng(3);
  const std::regex fact(" (Sandra|Daniel|Gertrude|Winston) (went to|moved to|journeyed to|travelled to) the ([a-z]+)\\.");
  for (int64_t L : {80, 400})
    for (int k = 0; k < 10; ++k) {
      auto s = make_babi_prompt(*tok, L, text, 3, rng);
      ASSERT_EQ(static_cast<int64_t>(s.ids.size()), L);
      const std::string t = tok->decode(s.ids);
      std::smatch q;
      ASSERT_TRUE(std::regex_search(t, q, std::regex(" Where is ([A-Za-z]+)\\? ([A-Za-z]+) is in the$"))) << t;
      std::string last;
      int count = 0;
      for (auto it = std::sregex_iterator(t.begin(), t.end(), fact); it != std::sregex_iterator(); ++it, ++count)
        if ((*it)[1] == q[1].str()) last = (*it)[3];
      EXPECT_EQ(count, 3) << t;
      EXPECT_EQ(s.answer, last);
      EXPECT_GT(s.distance, 0);
      EXPECT_LT(s.distance, L);
    }
  EXPECT_THROW(make_babi_prompt(*tok, 20, text, 3, rng), Error);
  auto docs = babi_training_docs(4, 120, 1, text, 2, 1, tok.get());
  for (auto& d : docs) {
    ASSERT_EQ(d.tokens.size(), 121u);
    const std::string t = tok->decode(std::vector<int32_t>(d.tokens.begin(), d.tokens.end() - 1));
    EXPECT_TRUE(std::regex_search(t, std::regex(" is in the [a-z]+\\.$"))) << t;
  }
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 4003; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(5);
  auto r = evaluate_babi(m, {100, 150}, text, 2, 3, 9, tok.get());
  ASSERT_EQ(r.accuracy.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(r.accuracy[i] >= 0 && r.accuracy[i] <= 1 && r.choice_accuracy[i] >= 0 && r.choice_accuracy[i] <= 1);
    EXPECT_GT(r.mean_distance[i], 0);
  }
}

// Oracles: one that finds the person's last fact in the decoded prompt scores 1 greedy and 1 choice;
// one that answers another location scores 0 on both; one that answers the last-mentioned location
// scores exactly the reported recency baseline, which lies near 0.5 with 4 facts.
namespace {
struct BabiOracle : Answerer {
  const Tokenizer& tok;
  int mode = 0;  // 0: right, 1: a wrong location, 2: the last-mentioned location
  explicit BabiOracle(const Tokenizer& t) : tok(t) {}
  std::string answer(const std::vector<int32_t>& prompt) const {
    const std::string t = tok.decode(prompt);
    std::smatch q;
    EXPECT_TRUE(std::regex_search(t, q, std::regex("Where is ([A-Za-z]+)\\? [A-Za-z]+ is in the ?$")));
    const std::regex fact(" (Sandra|Daniel|Gertrude|Winston) (went to|moved to|journeyed to|travelled to) the ([a-z]+)\\.");
    std::string right, last;
    for (auto it = std::sregex_iterator(t.begin(), t.end(), fact); it != std::sregex_iterator(); ++it) {
      if ((*it)[1] == q[1].str()) right = (*it)[3];
      last = (*it)[3];
    }
    if (mode == 2) return last;
    if (mode == 1) {
      const auto& locs = babi_locations();
      return locs[(std::find(locs.begin(), locs.end(), right) - locs.begin() + 1) % locs.size()];
    }
    return right;
  }
  std::vector<int32_t> ids(const std::string& loc) const {
    return tok.kind() == "bytes" ? encode_bytes(loc) : tok.encode(" " + loc);
  }
  TokenRows greedy(const TokenRows& prompts, int64_t n) override {
    TokenRows out;
    for (const auto& p : prompts) {
      auto a = ids(answer(p));
      const auto dot = tok.kind() == "bytes" ? encode_bytes(".") : tok.encode(".");
      while (static_cast<int64_t>(a.size()) < n) a.push_back(dot[0]);
      a.resize(static_cast<size_t>(n));
      out.push_back(a);
    }
    return out;
  }
  std::vector<std::vector<double>> loglik(const TokenRows& prompts, const TokenRows& candidates) override {
    std::vector<std::vector<double>> out;
    for (const auto& p : prompts) {
      const auto a = ids(answer(p));
      std::vector<double> row;
      for (const auto& c : candidates) row.push_back(c == a ? 0.0 : -1.0);
      out.push_back(row);
    }
    return out;
  }
};
}  // namespace

TEST(Babi, OracleScoresOneWrongAnswersZeroAndRecencyIsTheBaseline) {
  const std::string text = prose() + prose() + prose() + prose();
  const test::TwoTokenizers toks;
  for (const Tokenizer* tok : toks.all()) {
    SCOPED_TRACE(tok->kind());
    BabiOracle o(*tok);
    const std::vector<int64_t> lengths{300, 900};
    auto right = score_babi(o, lengths, text, 4, 200, 5, tok);
    o.mode = 1;
    auto wrong = score_babi(o, lengths, text, 4, 200, 5, tok);
    o.mode = 2;
    auto recent = score_babi(o, lengths, text, 4, 200, 5, tok);
    for (size_t i = 0; i < lengths.size(); ++i) {
      EXPECT_EQ(right.accuracy[i], 1.0);
      EXPECT_EQ(right.choice_accuracy[i], 1.0);
      EXPECT_EQ(wrong.accuracy[i], 0.0);
      EXPECT_EQ(wrong.choice_accuracy[i], 0.0);
      EXPECT_DOUBLE_EQ(recent.accuracy[i], right.last_mentioned_accuracy[i]);
      EXPECT_DOUBLE_EQ(recent.choice_accuracy[i], right.last_mentioned_accuracy[i]);
      EXPECT_GT(right.last_mentioned_accuracy[i], 0.3);  // 4 facts about 4 people: about 0.5
      EXPECT_LT(right.last_mentioned_accuracy[i], 0.7);
    }
  }
}
