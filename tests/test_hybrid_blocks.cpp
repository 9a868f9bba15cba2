// test_hybrid_blocks.cpp — the hybrids' attention and MLP blocks (core/model/blocks/) against
// transformers' own modules (issue 53): tests/golden/hf-*-blocks hold tiny models written by
// save_pretrained and each block's input and output captured inside transformers' forward, whole
// and in two pieces through its cache (tests/golden/make_golden_hybrid_blocks.py). Every block here
// loads the checkpoint's weights by its module path and must give transformers' outputs to 1e-12 of
// their scale (measured: 0 to 5e-16); blocks with q/k norms to 1e-6 (measured 8e-8: transformers
// computes those norms in float32 inside a float64 model, statescope in float64). Its two pieces
// through the cache must equal one pass to 1e-12.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/blocks/attention.h"
#include "core/model/blocks/mlp.h"
#include "core/model/blocks/moe.h"
#include "core/model/checkpoint.h"
#include "core/store/h5file.h"
#include "tests/error_text.h"
#include "tests/golden_util.h"

using namespace statescope;

namespace {

torch::Tensor f64(const H5File& f, const std::string& name) {
  std::vector<int64_t> d;
  auto v = f.read_f64(name, &d);
  return torch::from_blob(v.data(), d, torch::kFloat64).clone();
}

// The module's parameters from the checkpoint's tensors under `prefix` ("model.layers.1.self_attn.").
void load(torch::nn::Module& m, const std::string& dir, const std::string& prefix) {
  const StateDict sd = read_weights_file(test::kGolden + dir + "/model.safetensors");
  torch::NoGradGuard ng;
  m.to(torch::kFloat64);  // before the copy: float32 parameters would round the checkpoint's float64
  auto fill = [&](torch::OrderedDict<std::string, torch::Tensor> tensors) {
    for (auto& p : tensors) {
      auto it = sd.find(prefix + p.key());
      ASSERT_NE(it, sd.end()) << prefix + p.key() << " not in " << dir;
      ASSERT_EQ(it->second.sizes(), p.value().sizes()) << p.key();
      p.value().copy_(it->second);
    }
  };
  fill(m.named_parameters());
  fill(m.named_buffers());
}

// max |a - b| / max |b|
double rel(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

// Runs `block(x, cache)` whole and in the fixture's two pieces; compares with transformers.
template <class F>
void check(const std::string& dir, const std::string& module, F block, double tol, bool cached = true) {
  SCOPED_TRACE(dir + " " + module);
  H5File f(test::kGolden + dir + "/blocks.h5", H5File::Mode::Read);
  auto g = [&](const char* n) { return f64(f, module + "/" + n); };
  const double whole = rel(block(g("input"), nullptr), g("output"));
  EXPECT_LT(whole, tol) << "whole sequence";
  KVCache cache;
  auto a = block(g("input_a"), &cache);
  auto b = block(g("input_b"), &cache);
  EXPECT_LT(rel(a, g("output_a")), tol) << "first piece";
  EXPECT_LT(rel(b, g("output_b")), tol) << "second piece, from the first's cache";
  std::printf("[ info ] %s %s: max |C++ - transformers| / max |transformers| = %.1e whole, %.1e second piece\n",
              dir.c_str(), module.c_str(), whole, rel(b, g("output_b")));
  if (cached) EXPECT_EQ(cache.length(), 21);
  // The two pieces through the cache are the rows of one pass over the same inputs (transformers' own
  // piece inputs differ from its whole run's in the last digits: its upstream layers compute in float32).
  EXPECT_LT(rel(torch::cat({a, b}, 1), block(torch::cat({g("input_a"), g("input_b")}, 1), nullptr)), 1e-12);
}

void check_attention(const std::string& dir, const std::string& path, const std::string& prefix, const AttentionConfig& c,
                     double tol = 1e-12) {
  c.validate(dir);
  Attention att(c);
  load(*att, dir, prefix);
  check(dir, path, [&](const torch::Tensor& x, KVCache* cache) { return att->forward(x, cache); }, tol);
}

void check_mlp(const std::string& dir, const std::string& path, const std::string& prefix, const MlpConfig& c) {
  Mlp mlp(c);
  load(*mlp, dir, prefix);
  check(dir, path, [&](const torch::Tensor& x, KVCache*) { return mlp->forward(x); }, 1e-12, /*cached=*/false);
}

void check_moe(const std::string& dir, const std::string& path, const std::string& prefix, const MoeConfig& c) {
  c.validate(dir);
  Moe moe(c);
  load(*moe, dir, prefix);
  check(dir, path, [&](const torch::Tensor& x, KVCache*) { return moe->forward(x); }, 1e-12, /*cached=*/false);
}

}  // namespace

// Nemotron-H: no positional encoding, 4 query heads over 2 key/value heads; relu^2 MLP. On disk under
// backbone.* (transformers renames model.* on save).
TEST(HybridBlocks, NemotronHAttentionAndRelu2Mlp) {
  AttentionConfig a;
  a.hidden = 48, a.heads = 4, a.kv_heads = 2, a.head_dim = 16;
  check_attention("hf-nemotron-h-blocks", "model.layers.1.mixer", "backbone.layers.1.mixer.", a);
  check_mlp("hf-nemotron-h-blocks", "model.layers.2.mixer", "backbone.layers.2.mixer.",
            {MlpConfig::Kind::Relu2, 48, 72});
}

// Granite 4.0-H: RoPE over the whole head, attention_multiplier as the scale (not head_dim^-0.5), the
// shared MLP's fused input_linear; and the NoPE variant with attention biases.
TEST(HybridBlocks, GraniteAttentionMultiplierRopeNopeAndSharedMlp) {
  AttentionConfig a;
  a.hidden = 48, a.heads = 4, a.kv_heads = 2, a.head_dim = 12, a.rope_theta = 1000, a.scaling = 0.0078125 * 9;
  check_attention("hf-granite-h-blocks", "model.layers.1.self_attn", "model.layers.1.self_attn.", a);
  check_mlp("hf-granite-h-blocks", "model.layers.1.shared_mlp", "model.layers.1.shared_mlp.",
            {MlpConfig::Kind::FusedSwiGLU, 48, 40});
  a.rope_theta = 0, a.bias = true;
  check_attention("hf-granite-h-nope-blocks", "model.layers.1.self_attn", "model.layers.1.self_attn.", a);
}

// Falcon-H1: RoPE, key_multiplier (in the cached keys), SwiGLU with mlp_multipliers.
TEST(HybridBlocks, FalconH1KeyMultiplierAndMlpMultipliers) {
  AttentionConfig a;
  a.hidden = 48, a.heads = 4, a.kv_heads = 2, a.head_dim = 16, a.rope_theta = 500, a.key_multiplier = 0.7;
  check_attention("hf-falcon-h1-blocks", "model.layers.0.self_attn", "model.layers.0.self_attn.", a);
  MlpConfig m{MlpConfig::Kind::SwiGLU, 48, 72};
  m.gate_multiplier = 0.9, m.down_multiplier = 1.2;
  check_mlp("hf-falcon-h1-blocks", "model.layers.0.feed_forward", "model.layers.0.feed_forward.", m);
}

// Qwen3.5 and Qwen3-Next: zero-centred q/k norms before a 25% partial RoPE, the sigmoid output gate
// from q_proj's per-head [q | gate] rows; SwiGLU.
TEST(HybridBlocks, QwenGatedPartialRopeAttentionAndSwiGlu) {
  AttentionConfig a;
  a.hidden = 48, a.heads = 4, a.kv_heads = 2, a.head_dim = 16, a.rope_theta = 1e4, a.partial_rotary = 0.25;
  a.qk_norm = true, a.output_gate = true, a.norm_eps = 1e-6;
  for (const std::string dir : {"hf-qwen3-5-blocks", "hf-qwen3-next-blocks"}) {
    check_attention(dir, "model.layers.1.self_attn", "model.layers.1.self_attn.", a, 1e-6);
    check_mlp(dir, "model.layers.1.mlp", "model.layers.1.mlp.", {MlpConfig::Kind::SwiGLU, 48, 72});
  }
}

// The oracle of the attention itself: with one key/value position the output is that position's value
// through o_proj whatever the scores; a cache of another layer's shape is refused by name.
TEST(HybridBlocks, OnePositionReadsItsOwnValueAndAMisfitCacheIsRefused) {
  AttentionConfig c;
  c.hidden = 8, c.heads = 2, c.kv_heads = 1, c.head_dim = 4, c.rope_theta = 100;
  Attention att(c);
  att->to(torch::kFloat64);
  auto x = torch::randn({1, 1, 8}, torch::kFloat64);
  auto v = torch::matmul(x, att->v_proj->weight.t()).view({1, 1, 1, 4});
  auto want = torch::matmul(torch::cat({v, v}, 2).reshape({1, 1, 8}), att->o_proj->weight.t());
  EXPECT_LT((att->forward(x) - want).abs().max().item<double>(), 1e-12);
  KVCache bad{torch::zeros({1, 3, 2, 4}, torch::kFloat64), torch::zeros({1, 3, 2, 4}, torch::kFloat64)};
  const auto msg = test::error_of([&] { att->forward(x, &bad); });
  EXPECT_NE(msg.find("does not fit this layer"), std::string::npos) << msg;
  c.heads = 3, c.kv_heads = 2;
  EXPECT_NE(test::error_of([&] { c.validate("cfg.json"); }).find("multiple of the key/value heads"), std::string::npos);
}

// The mixtures of experts, routed in transformers' precision (a different rounding could pick other
// experts): Nemotron-H's grouped sigmoid router with its correction bias and scaling, plain and with
// the latent projections; Granite's softmax over the top logits with stacked SwiGLU experts;
// Qwen3-Next's renormalised softmax top-k with the gated shared expert.
TEST(HybridBlocks, MixturesOfExpertsRouteAndMixAsTransformers) {
  MoeConfig n{MoeConfig::Family::NemotronH, 48, 8, 2, 24};
  n.routed_scaling = 2.5, n.n_group = 2, n.topk_group = 1, n.shared_inner = 40;
  check_moe("hf-nemotron-h-moe-blocks", "model.layers.1.mixer", "backbone.layers.1.mixer.", n);
  n.latent = 16;
  check_moe("hf-nemotron-h-latent-blocks", "model.layers.1.mixer", "backbone.layers.1.mixer.", n);
  check_moe("hf-granite-h-moe-blocks", "model.layers.1.block_sparse_moe", "model.layers.1.block_sparse_moe.",
            {MoeConfig::Family::Granite, 48, 4, 2, 32});
  MoeConfig q{MoeConfig::Family::Qwen3Next, 48, 4, 2, 16};
  q.shared_inner = 24;
  check_moe("hf-qwen3-next-moe-blocks", "model.layers.1.mlp", "model.layers.1.mlp.", q);
}

// The routers' oracles: Nemotron-H's kept group holds every chosen expert; a top-k choice has k
// distinct experts whose weights sum to 1 (renormalised) or to the scaling factor; sizes the groups
// cannot hold are refused by name.
TEST(HybridBlocks, RoutersChooseWithinTheKeptGroupsAndTheirWeightsSumAsSaid) {
  torch::manual_seed(3);
  MoeConfig n{MoeConfig::Family::NemotronH, 16, 8, 2, 8};
  n.n_group = 4, n.topk_group = 1, n.routed_scaling = 2.5;
  Moe m(n);
  m->gate->weight.data().normal_();
  auto x = torch::randn({50, 16});
  auto [idx, w] = m->route(x);
  auto group = torch::div(idx, 2, "floor");  // 4 groups of 2 experts
  EXPECT_TRUE((group.select(1, 0) == group.select(1, 1)).all().item<bool>()) << "both experts in the one kept group";
  EXPECT_TRUE((idx.select(1, 0) != idx.select(1, 1)).all().item<bool>());
  EXPECT_LT((w.sum(-1) - 2.5).abs().max().item<double>(), 1e-5);
  MoeConfig q{MoeConfig::Family::Qwen3Next, 16, 6, 3, 8};
  Moe mq(q);
  mq->gate->weight.data().normal_();
  EXPECT_LT((mq->route(x).second.sum(-1) - 1).abs().max().item<double>(), 1e-6);
  n.top_k = 3;
  EXPECT_NE(test::error_of([&] { n.validate("c.json"); }).find("num_experts_per_tok (3)"), std::string::npos);
}
