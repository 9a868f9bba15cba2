// test_attention.cpp — effective attention (core/analyses/attention/): M applied to a head's x, plus
// the initial state's own column, reproduces the scan's output without D, on random inputs, odd
// lengths, several groups and non-zero initial states (SSM and conv); oracle heads: one that forgets
// at once attends only to the diagonal, one that never forgets weighs s by C_t . B_s dt_s alone;
// Mamba-1 per channel against its selective scan, and a channel group as the mean of its channels.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/analyses/attention/attention.h"
#include "core/base/error.h"
#include "core/model/mamba1/model.h"
#include "core/model/mamba2/model.h"
#include "core/model/mamba1/selective_scan.h"
#include "core/model/mamba2/ssd_scan.h"

using namespace statescope;

namespace {

Mamba2Config tiny() {
  Mamba2Config c;
  c.d_model = 32, c.n_layer = 2, c.d_state = 8, c.headdim = 8, c.ngroups = 2, c.vocab_size = 64, c.chunk_size = 16;
  return c;
}

ModelState random_state(RecurrentLM& m, uint64_t seed) {
  torch::manual_seed(seed);
  ModelState s = m->zero_state(1);
  for (auto& l : s) {
    l.ssm = torch::randn_like(l.ssm) * 0.5;
    l.conv = torch::randn_like(l.conv) * 0.5;
  }
  return s;
}

}  // namespace

TEST(Attention, MTimesXPlusTheInitialColumnIsTheScan) {
  RecurrentLM m = Mamba2LM(tiny());
  m->reset_parameters(4);
  auto* m2 = dynamic_cast<Mamba2LMImpl*>(m.get());
  const int64_t L = 37;
  torch::manual_seed(9);
  const auto tokens = torch::randint(0, 64, {1, L}, torch::kInt64);
  for (bool with_init : {false, true}) {
    const ModelState init = random_state(m, 11);
    const ModelState* ip = with_init ? &init : nullptr;
    torch::NoGradGuard ng;
    ForwardOptions o;
    o.mixer_inputs = true;
    const auto out = m->forward(tokens, ip, o);
    for (int64_t layer = 0; layer < 2; ++layer) {
      const auto in = m2->mixer(layer)->scan_inputs(out.mixer_inputs[layer], ip ? &(*ip)[layer] : nullptr);
      auto h0 = ip ? (*ip)[layer].ssm.to(torch::kFloat64) : torch::Tensor();
      // The reference: the sequential scan in float64 on the same inputs, without D.
      const auto ref = ssd_scan_sequential(in.x.to(torch::kFloat64), in.dt.to(torch::kFloat64), in.A.to(torch::kFloat64),
                                           in.B.to(torch::kFloat64), in.C.to(torch::kFloat64), h0, false);
      for (int64_t head = 0; head < tiny().nheads(); ++head) {
        const auto a = effective_attention(m, tokens, layer, head, ip);
        ASSERT_EQ(a.M.sizes().vec(), (std::vector<int64_t>{L, L}));
        EXPECT_EQ(a.M.triu(1).abs().max().item<double>(), 0.0);  // causal
        auto x = in.x.select(2, head).squeeze(0).to(torch::kFloat64);             // [L, P]
        auto y = a.M.matmul(x);                                                    // [L, P]
        if (ip) {
          const int64_t g = head / (tiny().nheads() / tiny().ngroups);
          auto C = in.C.select(2, g).squeeze(0).to(torch::kFloat64);              // [L, N]
          auto read = C.matmul(h0[0][head].t());                                   // [L, P]: C_t . h_{-1}
          y = y + a.init.unsqueeze(1) * read;
        }
        auto want = ref.y.select(2, head).squeeze(0);                              // [L, P]
        const double err = (y - want).abs().max().item<double>(), scale = want.abs().max().item<double>();
        EXPECT_LT(err, 1e-9 * scale) << "layer " << layer << " head " << head << " init " << with_init;
        EXPECT_GT(scale, 1e-5);  // a real signal, not zeros on both sides
      }
    }
  }
}

TEST(Attention, OracleHeads) {
  RecurrentLM m = Mamba2LM(tiny());
  m->reset_parameters(5);
  auto* m2 = dynamic_cast<Mamba2LMImpl*>(m.get());
  {
    torch::NoGradGuard ng;
    auto A_log = m2->mixer(0)->A_log;
    A_log[0] = 30.0;   // head 0: A = -e^30, forgets everything between tokens
    A_log[1] = -60.0;  // head 1: A ~ -1e-26, never forgets
  }
  const int64_t L = 20;
  torch::manual_seed(2);
  const auto tokens = torch::randint(0, 64, {1, L}, torch::kInt64);
  const auto forget = effective_attention(m, tokens, 0, 0);
  EXPECT_LT(forget.M.tril(-1).abs().max().item<double>(), 1e-300);  // only the diagonal
  EXPECT_GT(forget.M.diagonal().abs().max().item<double>(), 1e-6);
  EXPECT_LT(forget.init.max().item<double>(), 1e-300);
  EXPECT_EQ(forget.by_distance[1].item<double>(), 0.0);
  const auto keep = effective_attention(m, tokens, 0, 1);
  torch::NoGradGuard ng;
  ForwardOptions o;
  o.mixer_inputs = true;
  const auto in = m2->mixer(0)->scan_inputs(m->forward(tokens, nullptr, o).mixer_inputs[0], nullptr);
  auto B = in.B.select(2, 0).squeeze(0).to(torch::kFloat64), C = in.C.select(2, 0).squeeze(0).to(torch::kFloat64);
  auto dt = in.dt.select(2, 1).squeeze(0).to(torch::kFloat64);
  auto want = (C.matmul(B.t()) * dt.unsqueeze(0)).tril();
  EXPECT_LT((keep.M - want).abs().max().item<double>(), 1e-12);
  EXPECT_NEAR(keep.init[L - 1].item<double>(), 1.0, 1e-12);
}

TEST(Attention, RefusesWhatItCannotShow) {
  RecurrentLM m = Mamba2LM(tiny());
  const auto tokens = torch::zeros({1, 8}, torch::kInt64);
  auto msg = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(msg([&] { effective_attention(m, tokens, 2, 0); }).find("layer 2 is outside 0..1"), std::string::npos);
  EXPECT_NE(msg([&] { effective_attention(m, tokens, 0, 8); }).find("head 8 is outside 0..7"), std::string::npos);
  EXPECT_NE(msg([&] { effective_attention(m, torch::zeros({1, kMaxAttentionLength + 1}, torch::kInt64), 0, 0); })
                .find("at most 4096"),
            std::string::npos);
  Mamba1Config c1;
  c1.d_model = 16, c1.n_layer = 1, c1.d_state = 4, c1.vocab_size = 64;
  RecurrentLM m1 = Mamba1LM(c1);
  EXPECT_NE(msg([&] { effective_attention(m1, tokens, 0, 9); }).find("channel group 9 is outside 0..0"), std::string::npos);
}

TEST(Attention, Mamba1ChannelsReproduceTheSelectiveScanAndGroupsAverageThem) {
  // Per channel c: M_c x_c plus sum_n C_t[n] exp(A_cn sum dt) h_{-1}[c, n] is the scan without D.
  Mamba1Config c1;
  c1.d_model = 16, c1.n_layer = 2, c1.d_state = 4, c1.vocab_size = 64;
  RecurrentLM m = Mamba1LM(c1);
  m->reset_parameters(6);
  auto* m1 = dynamic_cast<Mamba1LMImpl*>(m.get());
  const int64_t L = 29;
  torch::manual_seed(3);
  const auto tokens = torch::randint(0, 64, {1, L}, torch::kInt64);
  const ModelState init = random_state(m, 12);
  torch::NoGradGuard ng;
  ForwardOptions o;
  o.mixer_inputs = true;
  const auto out = m->forward(tokens, &init, o);
  const int64_t layer = 1, Di = c1.d_inner();
  const auto in = m1->mixer(layer)->scan_inputs(out.mixer_inputs[layer], &init[layer]);
  auto f64 = [](const torch::Tensor& t) { return t.to(torch::kFloat64); };
  auto h0 = f64(init[layer].ssm);                                                  // [1, d_inner, N]
  const auto ref = selective_scan_sequential(f64(in.x), f64(in.dt), f64(in.A), f64(in.B), f64(in.C),
                                             torch::zeros({Di}, torch::kFloat64), h0, 1, false);
  auto B = f64(in.B).squeeze(0), C = f64(in.C).squeeze(0);
  for (int64_t ch = 0; ch < Di; ch += 5) {
    torch::Tensor decay;
    auto M = mamba1_channel_attention(f64(in.dt).squeeze(0).select(1, ch), f64(in.A)[ch], B, C, &decay);
    auto y = M.matmul(f64(in.x).squeeze(0).select(1, ch)) + (C * decay * h0[0][ch].unsqueeze(0)).sum(1);  // [L]
    auto want = ref.y.squeeze(0).select(1, ch);
    const double scale = want.abs().max().item<double>();
    EXPECT_LT((y - want).abs().max().item<double>(), 1e-9 * scale) << "channel " << ch;
    EXPECT_GT(scale, 1e-5);
  }
  // A channel group's matrix is the mean of its channels'.
  const int64_t groups = m->state_layout().groups, per = Di / groups;
  const auto a = effective_attention(m, tokens, layer, groups - 1, &init);
  auto mean = torch::zeros({L, L}, torch::kFloat64);
  for (int64_t ch = (groups - 1) * per; ch < groups * per; ++ch)
    mean += mamba1_channel_attention(f64(in.dt).squeeze(0).select(1, ch), f64(in.A)[ch], B, C) / double(per);
  EXPECT_LT((a.M - mean).abs().max().item<double>(), 1e-12);
  EXPECT_EQ(a.M.triu(1).abs().max().item<double>(), 0.0);
}

// Past 4096 tokens the record form bins positions (memory bounded by the bins): every cell is the
// mean |M| over its pairs s <= t — checked against the exact M of the first 4096 tokens, which the
// causal M shares; the bins are whole positions below 512, then log-spaced, at most 1024.
TEST(Attention, LongSequencesAreBinnedAndEachCellIsTheMeanOfItsExactPairs) {
  RecurrentLM m = Mamba2LM(tiny());
  m->reset_parameters(3);
  m->eval();
  const int64_t L = 5000, E = kMaxAttentionLength;
  torch::manual_seed(9);
  auto ids = torch::randint(0, 64, {L}, torch::kInt64);
  std::vector<int32_t> tokens(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + L);
  const AttentionResult r = attention_result(m, tokens, 1, 2);
  ASSERT_TRUE(r.binned());
  const int64_t B = r.bins();
  EXPECT_LE(B, kAttentionExactBins + kAttentionLogBins);
  EXPECT_EQ(r.positions[kAttentionExactBins - 1], kAttentionExactBins - 1);
  for (int64_t k = 1; k < B; ++k) EXPECT_GT(r.positions[k], r.positions[k - 1]);
  EXPECT_EQ(r.M.size(), static_cast<size_t>(B * B));
  EXPECT_EQ(r.by_distance.size(), static_cast<size_t>(L));
  const auto exact = effective_attention(m, ids.narrow(0, 0, E).view({1, E}), 1, 2);  // rows t < 4096
  auto absM = exact.M.abs();
  int checked = 0;
  for (int64_t i = 0; i + 1 < B && r.positions[i + 1] <= E; i += 7)
    for (int64_t j = 0; j <= i; j += 5) {
      const int64_t t0 = r.positions[i], t1 = r.positions[i + 1], s0 = r.positions[j], s1 = r.positions[j + 1];
      double sum = 0, n = 0;
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t s = s0; s < s1 && s <= t; ++s) sum += absM[t][s].item<double>(), ++n;
      EXPECT_NEAR(r.M[i * B + j], sum / n, 1e-12 * (1 + sum / n)) << "cell " << i << ", " << j;
      ++checked;
    }
  EXPECT_GT(checked, 1000);
  // The initial state's weight: the mean of the exact a_t over each bin.
  for (int64_t i = 0; i + 1 < B && r.positions[i + 1] <= E; i += 11)
    EXPECT_NEAR(r.init[i], exact.init.narrow(0, r.positions[i], r.positions[i + 1] - r.positions[i]).mean().item<double>(), 1e-12);
  // At most 65536 tokens.
  EXPECT_THROW(attention_result(m, std::vector<int32_t>(kMaxBinnedAttentionLength + 1, 0), 0, 0), Error);
}

// The record form at an exact length is built a block of rows at a time: the same M, init and
// by_distance as the whole matrix (odd length, every head), progress after every block with a
// cancel that stops it, and a budget checked before anything is allocated.
TEST(Attention, TheRecordIsBuiltInBlocksWithinABudgetAndCancels) {
  RecurrentLM m = Mamba2LM(tiny());
  m->reset_parameters(5);
  m->eval();
  const int64_t L = 3001;  // several blocks (2^21 / L = 698 rows each), the last one short
  torch::manual_seed(4);
  auto ids = torch::randint(0, 64, {L}, torch::kInt64);
  std::vector<int32_t> tokens(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + L);
  int64_t calls = 0, total = 0;
  const AttentionResult r = attention_result(m, tokens, 0, -1, [&](int64_t, int64_t t) { ++calls, total = t; return true; });
  const int64_t H = tiny().nheads(), blocks = (L + attention_block_rows(L) - 1) / attention_block_rows(L);
  ASSERT_FALSE(r.binned());
  ASSERT_EQ(r.M.size(), static_cast<size_t>(H * L * L));
  EXPECT_GT(blocks, 2);
  EXPECT_EQ(total, H * blocks);
  EXPECT_EQ(calls, H * blocks + 1);
  std::vector<int64_t> heads;
  for (int64_t h = 0; h < H; ++h) heads.push_back(h);
  const auto whole = effective_attention(m, ids.view({1, L}), 0, heads);
  for (int64_t h = 0; h < H; ++h) {
    auto M = torch::from_blob(const_cast<double*>(r.M.data()) + h * L * L, {L, L}, torch::kFloat64);
    EXPECT_TRUE(torch::equal(M, whole[h].M)) << "head " << h;  // the same rows, copied where they belong
    auto init = torch::from_blob(const_cast<double*>(r.init.data()) + h * L, {L}, torch::kFloat64);
    EXPECT_TRUE(torch::allclose(init, whole[h].init, 0, 0)) << "head " << h;
    auto by = torch::from_blob(const_cast<double*>(r.by_distance.data()) + h * L, {L}, torch::kFloat64);
    EXPECT_TRUE(torch::allclose(by, whole[h].by_distance, 1e-12, 1e-300)) << "head " << h;  // summed in another order
  }
  // A cancel after the third block stops the work there.
  int64_t seen = 0;
  EXPECT_THROW(attention_result(m, tokens, 0, -1, [&](int64_t, int64_t) { return ++seen <= 3; }), Error);
  EXPECT_EQ(seen, 4);
  // Under a budget too small for M, refused with the numbers before any allocation.
  EXPECT_GT(attention_memory_bytes(4096, 24), uint64_t{24} * 4096 * 4096 * 8);
  ::setenv("STATESCOPE_MEMORY_BUDGET", "100000000", 1);
  std::string msg;
  try {
    attention_result(m, tokens, 0, -1);
  } catch (const Error& e) {
    msg = e.what();
  }
  ::unsetenv("STATESCOPE_MEMORY_BUDGET");
  EXPECT_NE(msg.find("effective attention of " + std::to_string(H) + " heads at 3001 tokens"), std::string::npos) << msg;
  EXPECT_NE(msg.find("GiB"), std::string::npos) << msg;
}
