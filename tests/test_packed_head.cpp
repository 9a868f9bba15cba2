// test_packed_head.cpp — the output head through MKL's packed gemm (core/model/packed_head.h) gives
// F::linear's logits, packs once for repeated calls, and packs again whenever the weight, its
// contents, the rows or the thread count change; gradients and small heads never take it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/mamba2/model.h"
#include "core/model/packed_head.h"

using namespace statescope;

namespace {

// A head just above the size threshold with odd sizes: N x K = 4099 x 1031 (4.2M weights).
struct Head {
  torch::Tensor W = torch::randn({4099, 1031}) * 0.05;
  torch::Tensor h = torch::randn({3, 67, 1031});  // 201 rows
};

void expect_linear(const torch::Tensor& got, const torch::Tensor& h, const torch::Tensor& W) {
  auto want = torch::nn::functional::linear(h, W);
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_LE((got - want).abs().max().item<float>(), 1e-5f * (1.0f + want.abs().max().item<float>()));
}

}  // namespace

TEST(PackedHead, GivesTheLinearLogitsAndPacksOnlyWhenSomethingChanged) {
  if (!packed_gemm_available()) GTEST_SKIP() << "this LibTorch's BLAS has no MKL packed gemm: F::linear is used";
  torch::manual_seed(3);
  torch::NoGradGuard ng;
  Head t;
  PackedHead head;
  expect_linear(head(t.h, t.W), t.h, t.W);
  EXPECT_EQ(head.packs(), 1);
  auto other = torch::randn({3, 67, 1031});  // other inputs, same rows: the packed weight serves
  expect_linear(head(other, t.W), other, t.W);
  EXPECT_EQ(head.packs(), 1);
  t.W.mul_(-0.5);                             // the weight changed in place (as an optimizer step does)
  expect_linear(head(t.h, t.W), t.h, t.W);
  EXPECT_EQ(head.packs(), 2);
  auto fewer = t.h.narrow(1, 0, 30);          // 90 rows
  expect_linear(head(fewer, t.W), fewer, t.W);
  EXPECT_EQ(head.packs(), 3);
  auto W2 = t.W.clone();                      // another weight with equal values
  expect_linear(head(t.h, W2), t.h, W2);
  EXPECT_EQ(head.packs(), 4);
  const int threads = at::get_num_threads();
  at::set_num_threads(threads == 1 ? 2 : 1);
  expect_linear(head(t.h, W2), t.h, W2);
  EXPECT_EQ(head.packs(), 5);
  at::set_num_threads(threads);
}

TEST(PackedHead, GradientsSmallHeadsAndFewRowsTakeTheLinear) {
  torch::manual_seed(4);
  Head t;
  PackedHead head;
  {
    torch::NoGradGuard ng;
    EXPECT_FALSE(head(t.h.narrow(1, 0, 20), t.W).defined());                 // 60 rows
    EXPECT_FALSE(head(t.h.narrow(-1, 0, 100), torch::randn({300, 100})).defined());  // 30k weights
    EXPECT_FALSE(head(t.h.to(torch::kFloat64), t.W.to(torch::kFloat64)).defined());
  }
  EXPECT_FALSE(head(t.h, t.W).defined());  // grad mode on
  EXPECT_EQ(head.packs(), 0);
}

TEST(PackedHead, AModelsNoGradForwardUsesItAndGivesTheTrainingForwardsLogits) {
  if (!packed_gemm_available()) GTEST_SKIP() << "this LibTorch's BLAS has no MKL packed gemm: F::linear is used";
  Mamba2Config c;
  c.d_model = 64, c.n_layer = 1, c.d_state = 8, c.headdim = 16, c.vocab_size = 70000, c.chunk_size = 16;
  c.ngroups = 1, c.tie_embeddings = true;
  torch::manual_seed(5);
  Mamba2LM model(c);
  auto tokens = torch::randint(0, c.vocab_size, {2, 40}, torch::kInt64);
  auto with_grad = model->forward(tokens).logits.detach();  // [2, 40, V]: F::linear
  torch::NoGradGuard ng;
  auto packed = model->forward(tokens).logits;
  EXPECT_LE((packed - with_grad).abs().max().item<float>(), 1e-5f * (1.0f + with_grad.abs().max().item<float>()));
  auto again = model->forward(tokens).logits;
  EXPECT_TRUE(torch::equal(again, packed));
  EXPECT_EQ(model->packed_head().packs(), 1);  // packed by the first no-grad forward, kept for the second
}
