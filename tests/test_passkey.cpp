// test_passkey.cpp — the passkey generator puts the key where asked, prompts have the exact
// length, greedy step decoding equals argmax over full forwards, and the grid has its shape.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/mamba2/model.h"
#include "core/base/error.h"
#include "core/analyses/passkey/passkey.h"
#include "core/data/tokenizer.h"

#include <cctype>
#include "tests/two_tokenizers.h"

using namespace statescope;

TEST(Passkey, GeneratorLengthDepthAndKey) {
  std::mt19937_64 rng(1);
  for (int64_t L : {150, 1000, 4096})
    for (double d : {0.0, 0.5, 1.0}) {
      auto s = make_passkey(L, d, rng);
      EXPECT_EQ(static_cast<int64_t>(s.prompt.size()), L);
      EXPECT_EQ(s.key.size(), 5u);
      EXPECT_EQ(s.prompt.substr(s.key_offset, 16 + 5), "The pass key is " + s.key);
      EXPECT_EQ(s.prompt.find(s.key), static_cast<size_t>(s.key_offset + 16));  // stated once (twice in the fact)
      const double rel = static_cast<double>(s.key_offset) / static_cast<double>(L - 97);  // 59-byte fact, 38-byte question
      EXPECT_NEAR(rel, d, 0.05);
      EXPECT_EQ(s.prompt.substr(L - 38), "What is the pass key? The pass key is ");
    }
  EXPECT_THROW(make_passkey(50, 0.5, rng), Error);
  EXPECT_THROW(make_passkey(500, 1.5, rng), Error);
  auto docs = passkey_training_docs(3, 205, 1, 2);
  ASSERT_EQ(docs.size(), 3u);
  for (auto& d : docs) {  // one example of T tokens (answer last, the only scored tokens) + a pad
    ASSERT_EQ(d.tokens.size(), 206u);
    std::string t(d.tokens.begin(), d.tokens.end() - 1);
    EXPECT_EQ(t.substr(200 - 38, 38), "What is the pass key? The pass key is ");
    EXPECT_EQ(t.substr(200), t.substr(t.find("The pass key is ") + 16, 5));  // the answer is the key
    for (size_t i = 0; i < 206; ++i) EXPECT_EQ(d.loss_mask[i], i >= 200 && i < 205 ? 1 : 0) << i;
  }
  // Byte-level prompts through the tokenizer interface are the byte prompts, draw for draw.
  std::mt19937_64 a(9), b(9);
  auto s = make_passkey(300, 0.3, a);
  auto p = make_passkey_prompt(ByteTokenizer{}, 300, 0.3, b);
  EXPECT_EQ(p.ids, encode_bytes(s.prompt));
  EXPECT_EQ(p.answer, encode_bytes(s.key));
}

TEST(Passkey, BpePromptsCountTokensAndHoldTheKey) {
  auto tok = load_tokenizer(std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/tokenizer");
  ASSERT_EQ(tok->kind(), "bpe");
  std::mt19937_64 rng(4);
  const auto header = tok->encode(
      "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will quiz "
      "you about the important information there.");
  for (int64_t L : {90, 333, 5000})
    for (double d : {0.0, 0.5, 1.0}) {
      SCOPED_TRACE("L=" + std::to_string(L) + " depth=" + std::to_string(d));
      auto p = make_passkey_prompt(*tok, L, d, rng);
      ASSERT_EQ(static_cast<int64_t>(p.ids.size()), L);
      EXPECT_EQ(tok->decode(p.answer), " " + p.key);
      const std::string text = tok->decode(p.ids);
      EXPECT_EQ(text.substr(text.size() - 38), " What is the pass key? The pass key is");
      const std::vector<int32_t> from_key(p.ids.begin() + p.key_at, p.ids.end());
      const std::string fact = " The pass key is " + p.key + ". Remember it. " + p.key + " is the pass key.";
      EXPECT_EQ(tok->decode(from_key).rfind(fact, 0), 0u);
      EXPECT_TRUE(std::equal(header.begin(), header.end(), p.ids.begin()));  // the standard prompt's opening
      if (d == 0.0) EXPECT_EQ(p.key_at, static_cast<int64_t>(header.size()));
      if (d == 1.0) EXPECT_EQ(tok->decode(from_key), fact + " What is the pass key? The pass key is");
    }
  EXPECT_THROW(make_passkey_prompt(*tok, 20, 0.5, rng), Error);
  auto docs = passkey_training_docs(4, 90, 1, 1, tok.get());
  for (auto& doc : docs) {
    ASSERT_EQ(doc.tokens.size(), 91u);
    std::vector<int32_t> ids(doc.tokens.begin(), doc.tokens.end() - 1);
    const std::string text = tok->decode(ids);
    EXPECT_NE(text.find(" The pass key is "), std::string::npos) << text;
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(text.back()))) << text;  // ends with the answer
    std::vector<int32_t> scored;
    for (size_t i = 0; i < ids.size(); ++i)
      if (doc.loss_mask[i]) scored.push_back(ids[i]);
    const std::string key = text.substr(text.find(" The pass key is ") + 17, 5);
    EXPECT_EQ(tok->decode(scored), " " + key);  // the answer, and nothing else, is scored
  }
}

TEST(Passkey, BpeGridRunsOnABpeModel) {
  auto tok = load_tokenizer(std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/tokenizer");
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 4003; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(3);
  auto g = evaluate_passkey(m, {100, 170}, {0.0, 1.0}, 2, 4, tok.get());
  ASSERT_EQ(g.accuracy.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(g.accuracy[i] >= 0 && g.digit_accuracy[i] <= 1 && g.accuracy[i] <= g.digit_accuracy[i]);
}

namespace {
// A small random byte-level Mamba-2 in float64.
RecurrentLM tiny_model(uint64_t seed) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(seed);
  m->to(torch::kFloat64);
  return m;
}
}  // namespace

TEST(Passkey, StepDecodingEqualsFullForwardArgmax) {
  RecurrentLM m = tiny_model(3);
  auto prompt = torch::randint(0, 256, {2, 37}, torch::kInt64);
  auto got = greedy_decode(m, prompt, 5);
  torch::NoGradGuard ng;
  auto seq = prompt;
  for (int k = 0; k < 5; ++k) {
    auto next = m->forward(seq).logits.select(1, seq.size(1) - 1).argmax(-1, true);
    EXPECT_TRUE(torch::equal(next, got.narrow(1, k, 1))) << "token " << k;
    seq = torch::cat({seq, next}, 1);
  }
  auto g = evaluate_passkey(m, {150, 300}, {0.0, 0.5, 1.0}, 3, 4);
  ASSERT_EQ(g.accuracy.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_TRUE(g.accuracy[i] >= 0 && g.digit_accuracy[i] <= 1 && g.accuracy[i] <= g.digit_accuracy[i]);
}

// An oracle reading the key out of the decoded prompt scores 1 on every cell; one answering every
// digit wrong scores 0; one wrong in the last digit scores exact 0 and digit accuracy 0.8.
namespace {
struct PasskeyOracle : Answerer {
  const Tokenizer& tok;
  int mode = 0;  // 0: right, 1: every digit wrong, 2: the last digit wrong
  explicit PasskeyOracle(const Tokenizer& t) : tok(t) {}
  TokenRows greedy(const TokenRows& prompts, int64_t n) override {
    TokenRows out;
    for (const auto& p : prompts) {
      const std::string text = tok.decode(p);
      const size_t at = text.find("The pass key is ");
      EXPECT_NE(at, std::string::npos);
      std::string key = text.substr(at + 16, 5);
      for (size_t j = 0; j < key.size(); ++j)
        if (mode == 1 || (mode == 2 && j == 4)) key[j] = static_cast<char>('0' + (key[j] - '0' + 1) % 10);
      auto ids = tok.kind() == "bytes" ? encode_bytes(key) : tok.encode(" " + key);
      const auto dot = tok.kind() == "bytes" ? encode_bytes(".") : tok.encode(".");
      while (static_cast<int64_t>(ids.size()) < n) ids.push_back(dot[0]);
      ids.resize(static_cast<size_t>(n));
      out.push_back(ids);
    }
    return out;
  }
  std::vector<std::vector<double>> loglik(const TokenRows&, const TokenRows&) override { return {}; }
};
}  // namespace

TEST(Passkey, OracleScoresOneAndWrongAnswersZero) {
  const test::TwoTokenizers toks;
  for (const Tokenizer* tok : toks.all()) {
    SCOPED_TRACE(tok->kind());
    PasskeyOracle o(*tok);
    const std::vector<int64_t> lengths{200, 700};
    const std::vector<double> depths{0.0, 0.5, 1.0};
    auto right = score_passkey(o, lengths, depths, 12, 3, tok);
    o.mode = 1;
    auto wrong = score_passkey(o, lengths, depths, 12, 3, tok);
    o.mode = 2;
    auto last = score_passkey(o, lengths, depths, 12, 3, tok);
    ASSERT_EQ(right.accuracy.size(), 6u);
    for (size_t k = 0; k < 6; ++k) {
      EXPECT_EQ(right.accuracy[k], 1.0);
      EXPECT_EQ(right.digit_accuracy[k], 1.0);
      EXPECT_EQ(wrong.accuracy[k], 0.0);
      EXPECT_EQ(wrong.digit_accuracy[k], 0.0);
      EXPECT_EQ(last.accuracy[k], 0.0);
      EXPECT_DOUBLE_EQ(last.digit_accuracy[k], 0.8);
    }
  }
  EXPECT_EQ(passkey_digits_right("12345", "12345"), 5);
  EXPECT_EQ(passkey_digits_right(" 12345", " 1234"), 4);  // a short answer
  EXPECT_EQ(passkey_digits_right("12345", ""), 0);
}

// The answerer sends many prompts through the model in groups of rows (memory flat in their number):
// the answers and log-likelihoods are those of one forward over all rows, with a per-row initial state.
TEST(Passkey, AnswererInGroupsOfRowsAnswersAsOneForward) {
  RecurrentLM m = tiny_model(5);
  torch::manual_seed(2);
  const int64_t b = 7, L = 23;
  ModelState init = m->zero_state(b);
  for (auto& l : init) l.ssm.normal_(0, 0.5), l.conv.normal_(0, 0.5);
  TokenRows prompts(b);
  for (auto& p : prompts)
    for (int64_t i = 0; i < L; ++i) p.push_back(static_cast<int32_t>(torch::randint(0, 256, {1}).item<int64_t>()));
  const TokenRows cands{{65}, {66, 67, 68}};
  auto whole = model_answerer(m, &init, b * L * 32);   // one forward of all 7 rows
  auto parts = model_answerer(m, &init, 3 * L * 32);   // groups of 3, 3 and 1 rows
  EXPECT_EQ(parts->greedy(prompts, 6), whole->greedy(prompts, 6));
  const auto a = parts->loglik(prompts, cands), w = whole->loglik(prompts, cands);
  ASSERT_EQ(a.size(), static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i)
    for (size_t k = 0; k < cands.size(); ++k) EXPECT_NEAR(a[i][k], w[i][k], 1e-10) << i << " " << k;
  // Each row started from its own state: row 4 alone, from row 4 of the state, answers the same.
  ModelState row4;
  for (auto& l : init) row4.push_back({l.ssm.narrow(0, 4, 1), l.conv.narrow(0, 4, 1)});
  EXPECT_EQ(model_answerer(m, &row4)->greedy({prompts[4]}, 6)[0], whole->greedy(prompts, 6)[4]);
  EXPECT_NE(model_answerer(m)->loglik({prompts[4]}, cands)[0][1], w[4][1]) << "the initial state matters";
}
