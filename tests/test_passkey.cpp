// test_passkey.cpp — the passkey generator puts the key where asked, prompts have the exact
// length, greedy step decoding equals argmax over full forwards, and the grid has its shape.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/base/error.h"
#include "core/analyses/passkey.h"
#include "core/data/tokenizer.h"

#include <cctype>

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
  auto docs = passkey_training_docs(3, 205, 2);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].tokens.size(), 205u);
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
  for (int64_t L : {60, 333, 5000})
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
      if (d == 0.0) EXPECT_EQ(p.key_at, 0);
      if (d == 1.0) EXPECT_EQ(tok->decode(from_key), fact + " What is the pass key? The pass key is");
    }
  EXPECT_THROW(make_passkey_prompt(*tok, 20, 0.5, rng), Error);
  auto docs = passkey_training_docs(4, 90, 1, tok.get());
  for (auto& doc : docs) {
    ASSERT_EQ(doc.tokens.size(), 90u);
    std::vector<int32_t> ids(doc.tokens.begin(), doc.tokens.end());
    const std::string text = tok->decode(ids);
    EXPECT_NE(text.find(" The pass key is "), std::string::npos) << text;
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(text.back()))) << text;  // ends with the answer
  }
}

TEST(Passkey, BpeGridRunsOnABpeModel) {
  auto tok = load_tokenizer(std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/tokenizer");
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 4003; c.chunk_size = 16;
  Mamba2LM m(c);
  m->reset_parameters(3);
  auto g = evaluate_passkey(m, {70, 140}, {0.0, 1.0}, 2, 4, tok.get());
  ASSERT_EQ(g.accuracy.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(g.accuracy[i] >= 0 && g.digit_accuracy[i] <= 1 && g.accuracy[i] <= g.digit_accuracy[i]);
}

TEST(Passkey, StepDecodingEqualsFullForwardArgmax) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
  Mamba2LM m(c);
  m->reset_parameters(3);
  m->to(torch::kFloat64);
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
