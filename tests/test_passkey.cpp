// test_passkey.cpp — the passkey generator puts the key where asked, prompts have the exact
// length, greedy step decoding equals argmax over full forwards, and the grid has its shape.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/error.h"
#include "core/passkey.h"

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
  auto docs = passkey_training_docs(3, 200, 2);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].tokens.size(), 205u);
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
