// test_attention_stats.cpp — what a hybrid's attention layers read per position (issue 53): the entropy
// of each query's attention and its mass on the first kFirstTokens positions, from one attention call
// (oracles: uniform scores give log2 of the count read, a window of one gives 0 bits), through a whole
// hybrid (whole and in two pieces alike), and through the evaluation into the experiment file; and the
// attention analysis on a hybrid's model layers: an attention layer's softmax map (rows of 1, causal,
// windowed as the forward reads, the probe's entropy again), a Nemotron-H Mamba-2 layer's effective
// attention reproducing its scan, and the layers without a map refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "core/analyses/attention/attention.h"
#include "core/analyses/eval/evaluate.h"
#include "core/model/blocks/attention.h"
#include "core/model/checkpoint.h"
#include "core/model/intervention.h"
#include "core/model/mamba2/ssd_scan.h"
#include "core/model/nemotron_h/model.h"
#include "tests/error_text.h"
#include "tests/golden_util.h"
#include "tests/test_util.h"

using namespace statescope;

namespace {

Attention small_attention(uint64_t seed) {
  AttentionConfig ac;
  ac.hidden = 16, ac.heads = 4, ac.kv_heads = 2, ac.head_dim = 8, ac.rope_theta = 10000;
  Attention att(ac);
  torch::manual_seed(seed);
  torch::NoGradGuard ng;
  for (auto& p : att->parameters()) p.normal_(0, 0.3);
  return att;
}

}  // namespace

// Oracle 1: zero queries make every score 0, so position p spreads evenly over its p + 1 positions:
// entropy log2(p + 1) bits, min(4, p + 1) / (p + 1) of it on the first 4. Oracle 0: a window of one
// position reads itself alone: 0 bits, and its mass is on the first tokens exactly while p < 4.
TEST(AttentionStats, UniformScoresGiveLog2OfTheCountAndAWindowOfOneGivesNothing) {
  auto att = small_attention(1);
  torch::NoGradGuard ng;
  att->q_proj->weight.zero_();
  const auto x = torch::randn({2, 11, 16}, torch::kFloat64);
  att->to(torch::kFloat64);
  AttentionProbe probe;
  att->forward(x, nullptr, 0, &probe);
  ASSERT_EQ(probe.entropy.sizes(), (std::vector<int64_t>{2, 11, 4}));
  ASSERT_EQ(probe.first.sizes(), (std::vector<int64_t>{2, 11, 4}));
  for (int64_t p = 0; p < 11; ++p) {
    const double n = static_cast<double>(p + 1);
    EXPECT_NEAR(probe.entropy.select(1, p).max().item<double>(), std::log2(n), 1e-12) << p;
    EXPECT_NEAR(probe.entropy.select(1, p).min().item<double>(), std::log2(n), 1e-12) << p;
    EXPECT_NEAR(probe.first.select(1, p).mean().item<double>(), std::min(4.0, n) / n, 1e-12) << p;
  }
  auto att1 = small_attention(2);
  att1->to(torch::kFloat64);
  AttentionProbe one;
  att1->forward(x, nullptr, 1, &one);
  EXPECT_EQ(one.entropy.abs().max().item<double>(), 0.0);
  for (int64_t p = 0; p < 11; ++p) EXPECT_EQ(one.first.select(1, p).mean().item<double>(), p < 4 ? 1.0 : 0.0) << p;
  // Learned scores lie between the two.
  AttentionProbe free;
  att1->forward(x, nullptr, 0, &free);
  EXPECT_GT(free.entropy.select(1, 10).mean().item<double>(), 0.1);
  EXPECT_LT(free.entropy.select(1, 10).max().item<double>(), std::log2(11.0) + 1e-9);
}

// With a cache the first tokens are the cache's first positions: a sequence in two calls gives the
// statistics of one.
TEST(AttentionStats, TwoCallsWithACacheGiveThoseOfOne) {
  auto att = small_attention(3);
  torch::NoGradGuard ng;
  const auto x = torch::randn({2, 13, 16});
  AttentionProbe whole, a, b;
  att->forward(x, nullptr, 0, &whole);
  KVCache cache;
  att->forward(x.narrow(1, 0, 6), &cache, 0, &a);
  att->forward(x.narrow(1, 6, 7), &cache, 0, &b);
  EXPECT_TRUE(test::close(torch::cat({a.entropy, b.entropy}, 1), whole.entropy, 1e-5, "entropy"));
  EXPECT_TRUE(test::close(torch::cat({a.first, b.first}, 1), whole.first, 1e-5, "first"));
}

// Through the two hybrid families: [attention layers, b, L, heads], whole and in two pieces alike;
// not asked, not computed.
TEST(AttentionStats, AHybridGivesThemPerAttentionLayerWholeAndInPieces) {
  for (const std::string dir : {"hf-nemotron-h", "hf-qwen3-5"}) {
    auto m = load_model_dir(test::kGolden + dir, default_compute());
    const auto& lay = m->state_layout();
    ASSERT_GT(lay.attention_layers, 0) << dir;
    const auto ids = torch::randint(0, m->vocab_size(), {2, 19}, torch::kInt64);
    torch::NoGradGuard ng;
    ForwardOptions o = m->forward_options();
    o.attention_stats = true;
    const auto whole = m->forward(ids, nullptr, o);
    ASSERT_TRUE(whole.attention_entropy.defined()) << dir;
    EXPECT_EQ(whole.attention_entropy.sizes(), (std::vector<int64_t>{lay.attention_layers, 2, 19, lay.attention_heads})) << dir;
    EXPECT_EQ(whole.attention_first.sizes(), whole.attention_entropy.sizes()) << dir;
    // Position 0 reads itself alone; the first 4 positions read the first tokens alone.
    EXPECT_LT(whole.attention_entropy.select(2, 0).abs().max().item<double>(), 1e-6) << dir;
    EXPECT_LT((whole.attention_first.narrow(2, 0, 4) - 1).abs().max().item<double>(), 1e-6) << dir;
    const auto a = m->forward(ids.narrow(1, 0, 8), nullptr, o);
    const auto b = m->forward(ids.narrow(1, 8, 11), &a.final_state, o);
    EXPECT_TRUE(test::close(torch::cat({a.attention_entropy, b.attention_entropy}, 2), whole.attention_entropy, 1e-4, dir));
    EXPECT_TRUE(test::close(torch::cat({a.attention_first, b.attention_first}, 2), whole.attention_first, 1e-4, dir));
    o.attention_stats = false;
    EXPECT_FALSE(m->forward(ids, nullptr, o).attention_entropy.defined()) << dir << ": not asked, not computed";
  }
}

// The evaluation of a hybrid records them per attention layer, head and position (mean over the
// sequences), with each recurrent row's model layer; its full-context pass is what the forward gives.
TEST(AttentionStats, TheEvaluationOfAHybridRecordsThem) {
  auto m = load_model_dir(test::kGolden + "hf-nemotron-h", default_compute());
  const auto& lay = m->state_layout();
  std::vector<int32_t> text;
  for (int t = 0; t < 200; ++t) text.push_back(static_cast<int32_t>((t * 7 + 3) % m->vocab_size()));
  std::vector<Document> docs;
  docs.push_back({"d", text});
  EvalOptions o;
  o.length = 24, o.sequences = 3, o.segment = 10, o.batch = 2, o.T = 8;
  const EvalResult r = evaluate_positions(m, docs, o);
  ASSERT_EQ(r.layer_kinds, lay.layer_kinds);
  ASSERT_EQ(static_cast<int64_t>(r.recurrent_layers.size()), lay.n_layer);
  for (int64_t i = 0; i < lay.n_layer; ++i) EXPECT_EQ(r.layer_kinds[static_cast<size_t>(r.recurrent_layers[i])], "mamba2");
  ASSERT_EQ(static_cast<int64_t>(r.attention_layers.size()), lay.attention_layers);
  for (int64_t l : r.attention_layers) EXPECT_EQ(r.layer_kinds[static_cast<size_t>(l)], "attention");
  EXPECT_EQ(r.attention_heads, lay.attention_heads);
  EXPECT_EQ(r.first_tokens, kFirstTokens);
  const int64_t L = 24, H = r.attention_heads;
  ASSERT_EQ(static_cast<int64_t>(r.attn_entropy.size()), lay.attention_layers * H * L);
  // The mean over the 3 sequences of one full pass's entropy, head 0 of the first attention layer.
  auto seqs = eval_sequences(docs, L, 3);
  auto ids = torch::empty({3, L}, torch::kInt64);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t t = 0; t < L; ++t) ids[i][t] = seqs[static_cast<size_t>(i)][static_cast<size_t>(t)];
  torch::NoGradGuard ng;
  ForwardOptions fo = m->forward_options();
  fo.attention_stats = true;
  const auto want = m->forward(ids, nullptr, fo).attention_entropy[0].select(2, 0).mean(0).to(torch::kFloat64);  // [L]
  const auto got = torch::tensor(std::vector<double>(r.attn_entropy.begin(), r.attn_entropy.begin() + L), torch::kFloat64);
  EXPECT_TRUE(test::close(got, want, 1e-4, "entropy, layer 0 head 0"));
  EXPECT_EQ(r.attn_first[0], 1.0);  // position 0 reads position 0, one of the first tokens
  o.norms = false;
  EXPECT_TRUE(evaluate_positions(m, docs, o).attn_entropy.empty()) << "without the norms, no attention statistics";
}

// An attention layer's map is its softmax: rows of 1 over s <= t, nothing above the diagonal, no initial
// state, each row's entropy the one the forward's probe reports; under an attention_window of 3 a row
// reads its last 3 positions alone.
TEST(AttentionStats, AHybridsAttentionLayerMapIsItsSoftmax) {
  for (const auto& [dir, layer] : {std::pair<std::string, int64_t>{"hf-nemotron-h", 2}, {"hf-qwen3-5", 1}}) {
    auto m = load_model_dir(test::kGolden + dir, default_compute());
    std::vector<int32_t> ids;
    for (int t = 0; t < 23; ++t) ids.push_back(static_cast<int32_t>((t * 11 + 5) % m->vocab_size()));
    const AttentionResult a = attention_result(m, ids, layer, -1);
    EXPECT_EQ(a.layer_kind, "attention") << dir;
    ASSERT_EQ(static_cast<int64_t>(a.heads.size()), m->state_layout().attention_heads) << dir;
    const int64_t L = 23, H = static_cast<int64_t>(a.heads.size());
    const auto M = torch::tensor(a.M, torch::kFloat64).view({H, L, L});
    EXPECT_LT((M.sum(-1) - 1).abs().max().item<double>(), 1e-12) << dir;
    EXPECT_EQ(M.triu(1).abs().max().item<double>(), 0.0) << dir;
    EXPECT_EQ(torch::tensor(a.init, torch::kFloat64).abs().max().item<double>(), 0.0) << dir;
    torch::NoGradGuard ng;
    ForwardOptions o = m->forward_options();
    o.attention_stats = true;
    const auto tok = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()), torch::kInt64).view({1, L});
    const auto probe = m->forward(tok, nullptr, o).attention_entropy[0][0].transpose(0, 1).to(torch::kFloat64);  // [H, L]
    const auto entropy = -torch::xlogy(M, M).sum(-1) / std::log(2.0);                                            // [H, L]
    EXPECT_TRUE(test::close(entropy, probe, 1e-4, dir + ": the map's entropy is the forward's"));
    auto iv = std::make_shared<Intervention>();
    iv->attention_window = 3;
    m->intervention = iv;
    const auto w = torch::tensor(attention_result(m, ids, layer, 0).M, torch::kFloat64).view({L, L});
    EXPECT_EQ(w.tril(-3).abs().max().item<double>(), 0.0) << dir;
    EXPECT_LT((w.sum(-1) - 1).abs().max().item<double>(), 1e-12) << dir;
    EXPECT_GT(w.diagonal(-2).abs().min().item<double>(), 0.0) << dir;
  }
}

// A Nemotron-H Mamba-2 layer's effective attention (its model layer 4, recurrent layer 1): M applied to
// the head's x is the sequential scan's output without D, as for a pure Mamba-2; layers without a map
// (an MLP, mixture of experts, Qwen3.5's Gated DeltaNet) are refused by name.
TEST(AttentionStats, AHybridsMamba2LayerHasItsEffectiveAttentionAndOthersAreRefused) {
  auto m = load_model_dir(test::kGolden + "hf-nemotron-h", default_compute());
  m->to(torch::kFloat64);
  auto* nh = dynamic_cast<NemotronHLMImpl*>(m.get());
  ASSERT_NE(nh, nullptr);
  const int64_t L = 19;
  std::vector<int32_t> ids;
  for (int t = 0; t < L; ++t) ids.push_back(static_cast<int32_t>((t * 13 + 1) % m->vocab_size()));
  const auto tok = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()), torch::kInt64).view({1, L});
  torch::NoGradGuard ng;
  ForwardOptions o = m->forward_options();
  o.mixer_inputs = true;
  const auto out = m->forward(tok, nullptr, o);
  const auto in = std::get<Mamba2Mixer>(nh->mixers[4])->scan_inputs(out.mixer_inputs[1], nullptr);
  const auto ref = ssd_scan_sequential(in.x.to(torch::kFloat64), in.dt.to(torch::kFloat64), in.A.to(torch::kFloat64),
                                       in.B.to(torch::kFloat64), in.C.to(torch::kFloat64), torch::Tensor(), false);
  const AttentionResult a = attention_result(m, ids, 4, -1);
  EXPECT_EQ(a.layer_kind, "mamba2");
  const int64_t H = static_cast<int64_t>(a.heads.size());
  ASSERT_EQ(H, nh->mamba.nheads());
  const auto M = torch::tensor(a.M, torch::kFloat64).view({H, L, L});
  for (int64_t h = 0; h < H; ++h) {
    const auto y = M[h].matmul(in.x.select(2, h).squeeze(0).to(torch::kFloat64));  // [L, P]
    const auto want = ref.y.select(2, h).squeeze(0);
    EXPECT_LT((y - want).abs().max().item<double>(), 1e-9 * want.abs().max().item<double>()) << "head " << h;
    EXPECT_GT(want.abs().max().item<double>(), 1e-6);
  }
  EXPECT_NE(test::error_of([&] { attention_result(m, ids, 1, -1); }).find("layer 1 of this Nemotron-H is an MLP layer"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { attention_result(m, ids, 5, -1); }).find("layer 5 is outside 0..4"), std::string::npos);
  auto q = load_model_dir(test::kGolden + "hf-qwen3-5", default_compute());
  EXPECT_NE(test::error_of([&] { attention_result(q, ids, 0, -1); }).find("effective attention: written for selective scans"),
            std::string::npos);
}
