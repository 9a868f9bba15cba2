// test_bf16_accuracy.cpp — issue 55: bf16 on the CPU measured against fp32 on the same bytes, failing
// when it drifts. The embedded model's loss per position (2,048 positions), its logits, the demo's
// excess table, and EffRem and passkey at their printed precision. bf16 runs on this CPU's own units
// (AMX, AVX512-BF16) where it has them, else emulated (the same numerics, slower), so every machine
// checks the same thing. What bf16 reaches here is in bench/RESULTS.md (issue 55).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/analyses/effrem/effrem.h"
#include "core/analyses/eval/evaluate.h"
#include "core/analyses/passkey/passkey.h"
#include "core/compute/runtime.h"
#include "core/data/corpus.h"
#include "core/experiment/experiment.h"
#include "core/model/checkpoint.h"
#include "core/model/model_registry.h"
#include "tests/scratch.h"
#include "tests/test_util.h"

using namespace statescope;

namespace {

RecurrentLM embedded(const std::string& precision) {
  return load_model_dir(resolve_model("embedded"), make_compute("cpu", precision, "auto"));
}

const double kLn2 = std::log(2.0);

}  // namespace

TEST(Bf16Accuracy, EmbeddedLossPerPositionWithinAHundredthOfABit) {
  statescope::test::Bf16IsaGuard bf16(statescope::test::bf16_here());
  auto a = embedded("fp32"), b = embedded("bf16");
  ASSERT_FALSE(a->mixed_bf16);
  ASSERT_TRUE(b->mixed_bf16);
  const auto corpus = load_austen(default_corpus_path());
  EvalOptions o;
  o.T = 32; o.length = 2048; o.sequences = 4; o.segment = 512; o.batch = 4;
  const auto ra = evaluate_positions(a, corpus.validation, o), rb = evaluate_positions(b, corpus.validation, o);
  ASSERT_EQ(ra.nll_seq.size(), rb.nll_seq.size());
  // The loss per position (the curve the app plots: the mean over sequences) and per token.
  double curve = 0, curve_excess = 0, per_token = 0, worst = 0;
  const size_t n = ra.nll.size();
  for (size_t p = 0; p < n; ++p) {
    curve += std::abs(ra.nll[p] - rb.nll[p]) / kLn2 / n;
    curve_excess += std::abs((ra.nll[p] - ra.windowed_nll[p]) - (rb.nll[p] - rb.windowed_nll[p])) / kLn2 / n;
  }
  for (size_t i = 0; i < ra.nll_seq.size(); ++i) {  // every (sequence, position)
    const double d = std::abs(double(ra.nll_seq[i]) - rb.nll_seq[i]) / kLn2;
    per_token += d / ra.nll_seq.size();
    worst = std::max(worst, d);
  }
  // The logits of one 2,048-byte sequence in one pass.
  const auto seq = eval_sequences(corpus.validation, 2048, 1)[0];
  auto tok = torch::tensor(std::vector<int64_t>(seq.begin(), seq.begin() + 2048)).view({1, 2048});
  torch::NoGradGuard ng;
  const auto la = a->forward(tok).logits, lb = b->forward(tok).logits;  // [1, 2048, 256]
  const double logit_diff = (la - lb).abs().max().item<double>(), logit_max = la.abs().max().item<double>();
  std::cout << "[bf16 " << cpu_bf16_isa() << "] embedded, 4 sequences x 2,048 positions: loss per position (mean over "
            << "sequences) differs by " << curve << " bits/byte on average, its excess by " << curve_excess
            << "; per token " << per_token << " (worst " << worst << "); max |logit diff| " << logit_diff
            << " (max |logit| " << logit_max << ")\n";
  EXPECT_GT(per_token, 0.0) << "bf16 did not run";
  EXPECT_LT(curve, 0.01) << "bf16 drifted from fp32";
  EXPECT_LT(curve_excess, 0.01);
  EXPECT_LT(per_token, 0.02);
  EXPECT_LT(logit_diff, 0.02 * logit_max);
}

TEST(Bf16Accuracy, DemoExcessTableWithinAHundredthOfABitPerCell) {
  statescope::test::Bf16IsaGuard bf16(statescope::test::bf16_here());
  std::ifstream in(std::string(STATESCOPE_SOURCE_DIR) + "/data/experiments/demo.json");
  std::stringstream spec;
  spec << in.rdbuf();
  auto with = [&](const std::string& precision) {
    auto s = spec.str();
    s.insert(s.find('{') + 1, "\"precision\": \"" + precision + "\", ");
    return run_experiment(s, "demo.json", statescope::test::scratch("statescope_bf16_demo_" + precision + ".h5"), {}, {},
                          true, 2);
  };
  const auto a = with("fp32"), b = with("bf16");
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].excess.size(), b[r].excess.size()) << a[r].name;
    for (size_t k = 0; k < a[r].excess.size(); ++k) {
      EXPECT_NEAR(a[r].excess[k], b[r].excess[k], 0.01) << a[r].name << " bin " << k;
      worst = std::max(worst, std::abs(a[r].excess[k] - b[r].excess[k]));
    }
    EXPECT_NEAR(a[r].loss_far, b[r].loss_far, 0.01) << a[r].name;
    EXPECT_NEAR(a[r].norm_ratio, b[r].norm_ratio, 0.05 * a[r].norm_ratio) << a[r].name;
  }
  std::cout << "[bf16 " << cpu_bf16_isa() << "] the demo's excess table (6 runs x " << a[0].excess.size()
            << " bins, post-training in bf16 too): largest cell difference " << worst << " bits/byte\n";
  EXPECT_GT(worst, 0.0) << "bf16 did not run";
}

TEST(Bf16Accuracy, EffRemWithinItsNoiseFloorAndPasskeyUnchanged) {
  statescope::test::Bf16IsaGuard bf16(statescope::test::bf16_here());
  auto a = embedded("fp32"), b = embedded("bf16");
  const auto corpus = load_austen(default_corpus_path());
  EffRemOptions eo;
  eo.Ts = {32, 128};
  eo.points = 8;
  eo.sequences = 16;
  const auto ea = effective_remembrance(a, corpus.validation, eo), eb = effective_remembrance(b, corpus.validation, eo);
  ASSERT_EQ(ea.value.size(), eb.value.size());
  // bf16 has a noise floor in EffRem: near t = 0 the two contexts differ by a few tokens, fp32's TV is
  // 0.002-0.004, and the two bf16 forwards round differently, which moves it by up to ~0.0016 (measured
  // on AVX512-BF16): the printed third decimal can change there. Held here: every cell within 0.0025,
  // and where EffRem is above 0.01 the move is small against its standard error over sequences.
  double worst = 0, worst_in_se = 0;
  for (size_t i = 0; i < ea.value.size(); ++i) {
    if (std::isnan(ea.value[i])) continue;
    const double d = std::abs(ea.value[i] - eb.value[i]);
    worst = std::max(worst, d);
    EXPECT_LT(d, 0.0025) << "EffRem cell " << i << " (" << ea.value[i] << ")";
    if (ea.value[i] > 0.01) {
      worst_in_se = std::max(worst_in_se, d / ea.stderr_[i]);
      EXPECT_LT(d, 0.35 * ea.stderr_[i]) << "EffRem cell " << i << " (" << ea.value[i] << " ± " << ea.stderr_[i] << ")";
    }
  }
  const auto pa = evaluate_passkey(a, {128, 256}, {0.0, 0.5, 1.0}, 10, 5), pb = evaluate_passkey(b, {128, 256}, {0.0, 0.5, 1.0}, 10, 5);
  ASSERT_EQ(pa.accuracy.size(), pb.accuracy.size());
  for (size_t i = 0; i < pa.accuracy.size(); ++i) {
    EXPECT_NEAR(pa.accuracy[i], pb.accuracy[i], 0.005) << "passkey, printed to 2 decimals, cell " << i;
    EXPECT_NEAR(pa.digit_accuracy[i], pb.digit_accuracy[i], 0.005) << "passkey digits, cell " << i;
  }
  std::cout << "[bf16 " << cpu_bf16_isa() << "] EffRem (T 32, 128; 16 sequences): largest difference " << worst
            << ", above 0.01 at most " << worst_in_se << " standard errors; passkey (2 lengths x 3 depths x 10 samples): equal at 2 decimals\n";
}
