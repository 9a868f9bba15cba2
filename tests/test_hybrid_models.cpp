// test_hybrid_models.cpp — the hybrids behind RecurrentLM (issue 53): Nemotron-H, Qwen3.5 and Granite 4.0-H opened from
// their transformers save_pretrained folders by load_model_dir (config.json's model_type, the family's
// checkpoint names and buffers), their state layout (the recurrent layers counted, every layer's kind,
// the attention caches), two pieces equal one pass on each scan, saved and read back (transformers'
// tensor names written back), a reset period that resets the recurrent layers and keeps the caches
// (the ablation "recurrent state reset every T, attention untouched"), and misfit caches refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>

#include "core/model/blocks/attention.h"
#include "core/model/checkpoint.h"
#include "core/model/intervention.h"
#include "core/model/model_config.h"
#include "tests/error_text.h"
#include "tests/golden_util.h"
#include "tests/hybrid_golden.h"
#include "tests/recurrent_checks.h"
#include "tests/scratch.h"
#include "tests/test_util.h"

using namespace statescope;
using test::kGolden;

namespace {

const std::vector<std::string> kFamilies{"hf-nemotron-h", "hf-qwen3-5", "hf-granite-h", "hf-granite-h-dense"};
const std::map<std::string, std::string> kArchOf{
    {"hf-nemotron-h", "nemotron_h"}, {"hf-qwen3-5", "qwen3_5"}, {"hf-granite-h", "granite_h"}, {"hf-granite-h-dense", "granite_h"}};

RecurrentLM open(const std::string& dir) { return load_model_dir(kGolden + dir, default_compute()); }

torch::Tensor ids_of(const std::string& dir) {
  return test::read(H5File(kGolden + dir + "/golden.h5", H5File::Mode::Read), "input_ids");  // [2, 21]
}

}  // namespace

// As a user opens them: float32, the default scan; logits to 1e-4 of transformers' float64 truth.
TEST(HybridModels, OpenFromTheirFoldersAndMatchTransformersInFloat32) {
  for (const auto& dir : kFamilies) {
    auto m = open(dir);
    EXPECT_EQ(m->architecture(), kArchOf.at(dir));
    H5File g(kGolden + dir + "/golden.h5", H5File::Mode::Read);
    torch::NoGradGuard ng;
    const double r = test::rel(m->forward(ids_of(dir)).logits.to(torch::kFloat64), test::f64(g, "logits"));
    EXPECT_LT(r, 1e-4) << dir;
    std::printf("[ info ] %s in float32 through load_model_dir: max |d logits| / max |logits| = %.1e\n", dir.c_str(), r);
  }
}

TEST(HybridModels, TheLayoutCountsTheRecurrentLayersAndNamesEveryKind) {
  const auto n = open("hf-nemotron-h")->state_layout();
  EXPECT_EQ(n.n_layer, 2);
  EXPECT_EQ(n.layer_kinds, (std::vector<std::string>{"mamba2", "mlp", "attention", "moe", "mamba2"}));
  EXPECT_EQ(n.attention_layers, 1);
  EXPECT_EQ(n.model_layer(0), 0);
  EXPECT_EQ(n.model_layer(1), 4);
  EXPECT_EQ(n.ssm_axes(), "(heads, headdim, d_state)");
  const auto q = open("hf-qwen3-5");
  EXPECT_EQ(q->state_layout().n_layer, 2);
  EXPECT_EQ(q->state_layout().layer_kinds, (std::vector<std::string>{"gated_deltanet", "attention", "gated_deltanet"}));
  EXPECT_EQ(q->state_layout().model_layer(1), 2);
  const auto line = architecture_line(q->model_config());
  EXPECT_NE(line.find("3 layers (2 gated_deltanet, 1 attention)"), std::string::npos) << line;
  EXPECT_NE(line.find("recurrent state (heads, head_k_dim, head_v_dim)"), std::string::npos) << line;
  const auto d = describe(open("hf-nemotron-h")->model_config());
  EXPECT_EQ(d.at(0).second, "Nemotron-H (nemotron_h)");
  EXPECT_EQ(std::find_if(d.begin(), d.end(), [](auto& f) { return f.first == "layers"; })->second, "M-*EM");
}

TEST(HybridModels, TwoPiecesEqualOnePassOnEachScanAndTheScansAgree) {
  for (const auto& dir : kFamilies) {
    auto m = open(dir);
    const auto ids = ids_of(dir);
    test::expect_pieces_equal_one_pass(m, ids, 9, {ScanImpl::Chunked, ScanImpl::Fused, ScanImpl::Sequential});
    torch::NoGradGuard ng;
    ForwardOptions a, b;
    a.scan = ScanImpl::Chunked, b.scan = ScanImpl::Fused;
    a.state_norms = b.state_norms = true;
    auto x = m->forward(ids, nullptr, a), y = m->forward(ids, nullptr, b);
    EXPECT_TRUE(test::close(y.logits, x.logits, 1e-5, dir + " fused vs chunked"));
    EXPECT_EQ(x.norm_per_head.size(0), m->state_layout().n_layer) << "norms of the recurrent layers alone";
    EXPECT_TRUE(test::close(y.norm_per_head, x.norm_per_head, 1e-5, dir + " norms"));
  }
}

// Saved by statescope and read back: the same logits bit for bit, as many parameters as the config
// counts, and the file under the checkpoint's own names (Qwen3.5's fused tensors fused again).
TEST(HybridModels, SaveAndReadBackUnderTheCheckpointsOwnNames) {
  for (const auto& dir : kFamilies) {
    test::expect_saves_and_reloads(dir);
    auto m = open(dir);
    const auto out = test::scratch("hybrid-save-" + dir);
    save_model_dir(m, out);
    const auto mine = read_weights_file(out + "/model.safetensors"), theirs = read_weights_file(kGolden + dir + "/model.safetensors");
    ASSERT_EQ(mine.size(), theirs.size()) << dir;
    for (const auto& [name, t] : theirs) {
      ASSERT_EQ(mine.count(name), 1u) << dir << ": " << name << " not written back";
      EXPECT_TRUE(test::close(mine.at(name).to(torch::kFloat64), t.to(torch::kFloat64), 1e-7, name));
    }
    EXPECT_EQ(architecture(load_model_config(out + "/config.json")), m->architecture());
  }
}

// reset_period k: the recurrent layers restart from zero at every multiple of k, the attention layers
// keep every key seen: the same as pieces handed the caches alone.
TEST(HybridModels, AResetPeriodResetsTheRecurrentLayersAndKeepsTheCaches) {
  for (const auto& dir : kFamilies) {
    auto m = open(dir);
    const auto ids = ids_of(dir);  // [2, 21]
    torch::NoGradGuard ng;
    Intervention iv;
    iv.reset_period = 8;
    ForwardOptions o = m->forward_options();  // the scan the pieces below run
    o.intervention = &iv;
    auto cut = m->forward(ids, nullptr, o);
    std::vector<torch::Tensor> logits, forgetful;
    ModelState s, t;
    for (int64_t a = 0; a < 21; a += 8) {
      const auto piece = ids.narrow(1, a, std::min<int64_t>(8, 21 - a));
      ModelState keep = attention_only(s);
      auto out = m->forward(piece, a == 0 ? nullptr : &keep);
      logits.push_back(out.logits);
      s = out.final_state;
      auto blind = m->forward(piece);  // attention reset too
      forgetful.push_back(blind.logits);
    }
    EXPECT_TRUE(test::close(cut.logits, torch::cat(logits, 1), 1e-6, dir + " reset period vs pieces"));
    EXPECT_EQ(cut.final_state.attention.at(0).length(), 21) << "the caches hold every position";
    EXPECT_GT((cut.logits - torch::cat(forgetful, 1)).abs().max().item<double>(), 1e-4) << "attention's memory matters";
    EXPECT_GT((cut.logits - m->forward(ids).logits).abs().max().item<double>(), 1e-4) << "the reset matters";
  }
}

TEST(HybridModels, MisfitCachesAreRefusedByName) {
  auto m = open("hf-nemotron-h");
  torch::NoGradGuard ng;
  const auto ids = torch::zeros({1, 4}, torch::kInt64);
  auto s = m->forward(ids).final_state;  // 2 recurrent layers, 1 cache of 4 positions
  auto bad = s;
  bad.attention.push_back(bad.attention[0]);
  auto msg = test::error_of([&] { m->forward(ids, &bad); });
  EXPECT_NE(msg.find("2 attention caches, model has 1 attention layers"), std::string::npos) << msg;
  bad = s;
  bad.attention[0].keys = torch::zeros({1, 2, 4, 15});
  msg = test::error_of([&] { m->forward(ids, &bad); });
  EXPECT_NE(msg.find("attention layer 0 keys"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[batch, kv_heads, positions, head_dim]"), std::string::npos) << msg;
  bad = s;
  bad.attention[0].values = bad.attention[0].values.clone(at::MemoryFormat::Contiguous);
  bad.attention[0].values.view({-1})[3] = NAN;
  msg = test::error_of([&] { m->forward(ids, &bad); });
  EXPECT_NE(msg.find("attention layer 0 values hold non-finite"), std::string::npos) << msg;
  bad = ModelState();
  bad.push_back(s[0]);  // one recurrent layer of two
  msg = test::error_of([&] { m->forward(ids, &bad); });
  EXPECT_NE(msg.find("state has 1 recurrent layers, model has 2"), std::string::npos) << msg;
  EXPECT_NO_THROW(m->forward(ids, &s)) << "a whole state";
  auto caches_only = attention_only(s);
  EXPECT_NO_THROW(m->forward(ids, &caches_only)) << "the caches alone: recurrent layers at zero";
}

// attention_window w: position p reads p - w + 1 .. p. Oracle: a layer whose scores depend on relative
// positions alone (RoPE) gives at p what it gives as the last of those w positions run alone.
TEST(HybridModels, AnAttentionWindowIsTheLastPositionsAlone) {
  AttentionConfig ac;
  ac.hidden = 16, ac.heads = 4, ac.kv_heads = 2, ac.head_dim = 8, ac.rope_theta = 10000;
  Attention att(ac);
  torch::manual_seed(3);
  torch::NoGradGuard ng;
  for (auto& p : att->parameters()) p.normal_(0, 0.3);
  const auto x = torch::randn({2, 12, 16});
  const auto full = att->forward(x, nullptr, 4);
  for (int64_t p = 3; p < 12; ++p) {
    const auto alone = att->forward(x.narrow(1, p - 3, 4)).select(1, 3);
    EXPECT_TRUE(test::close(full.select(1, p), alone, 1e-5, "position " + std::to_string(p)));
  }
  EXPECT_TRUE(test::close(att->forward(x, nullptr, 12), att->forward(x), 0, "a window as long as the input"));
  EXPECT_GT((full - att->forward(x)).abs().max().item<double>(), 1e-3) << "a short window matters";
}

// Through a whole hybrid: a window at least as long as the input changes nothing; a window of 5 leaves
// the first 5 positions as they were and changes the later ones.
TEST(HybridModels, AnAttentionWindowActsOnTheAttentionLayersOfAHybrid) {
  for (const auto& dir : kFamilies) {
    auto m = open(dir);
    const auto ids = ids_of(dir);  // [2, 21]
    torch::NoGradGuard ng;
    const auto plain = m->forward(ids).logits;
    Intervention iv;
    ForwardOptions o = m->forward_options();
    o.intervention = &iv;
    iv.attention_window = 21;
    EXPECT_TRUE(test::close(m->forward(ids, nullptr, o).logits, plain, 1e-5, dir + " window >= length"));
    iv.attention_window = 5;
    const auto w = m->forward(ids, nullptr, o).logits;
    // (to float32 rounding: the experts' matmuls see other token sets)
    EXPECT_TRUE(test::close(w.narrow(1, 0, 5), plain.narrow(1, 0, 5), 1e-5, dir + " the first 5 positions"));
    EXPECT_GT((w - plain).abs().max().item<double>(), 1e-4) << dir;
  }
}
