// test_precision.cpp — device selection and bf16 mixed precision: a GPU asked for and absent is a
// clear error; bf16 forward stays close to fp32 with the SSM state, logits and loss in fp32; training
// under bf16 keeps fp32 master weights and learns.
#include <gtest/gtest.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <array>
#include <iostream>
#include <random>

#include "core/model/checkpoint.h"
#include "core/model/dense.h"
#include "core/model/mamba2/model.h"
#include "core/base/error.h"
#include "core/compute/runtime.h"
#include "core/train/state_policy.h"
#include "core/train/trainer.h"
#include "tests/test_util.h"

using namespace statescope;

namespace {

RecurrentLM tiny(uint64_t seed) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(seed, 0.5, 4.0);
  return m;
}

struct ComputeGuard {  // tests must not leak a process-wide setting
  std::string d = compute_device(), p = compute_precision(), s = scan_kernels();
  ~ComputeGuard() { set_compute(d, p), set_scan_kernels(s); }
};

using IsaGuard = statescope::test::Bf16IsaGuard;

}  // namespace

TEST(Device, NamesAreCheckedAgainstTheHardware) {
  EXPECT_EQ(resolve_device("cpu"), "cpu");
  EXPECT_THROW(resolve_device("tpu"), Error);
  EXPECT_THROW(resolve_device("cuda:x"), Error);
  if (torch::cuda::is_available()) {
    EXPECT_EQ(resolve_device("cuda"), "cuda:0");
    EXPECT_EQ(resolve_device("auto"), "cuda:0");
    EXPECT_THROW(resolve_device("cuda:4096"), Error);
  } else {
    EXPECT_EQ(resolve_device("auto"), "cpu");
    try {
      resolve_device("cuda");
      FAIL() << "cuda accepted without a GPU";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no CUDA device is visible"), std::string::npos) << e.what();
    }
  }
  ComputeGuard g;
  EXPECT_THROW(set_compute("cpu", "fp16"), Error);
  EXPECT_EQ(compute_precision(), g.p);  // a refused setting changes nothing
}

TEST(Device, ScanChoiceIsCheckedRecordedAndAutoIsTheCpuLoops) {
  ComputeGuard g;
  EXPECT_EQ(scan_kernels(), "auto");  // fused on the CPU, ATen on a GPU until the kernels have run on one
  try {
    set_scan_kernels("triton");
    FAIL() << "an unknown scan was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scan 'triton'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(scan_kernels(), "auto");
  set_compute("cpu", "fp32");
  EXPECT_EQ(compute_summary(), "cpu fp32 loop-scan");  // the file says which scan ran
  Compute gpu = default_compute();
  gpu.device = "cuda:0";
  EXPECT_FALSE(gpu.fused()) << "auto keeps ATen on a GPU";
  // Training on the CPU: the loops and ATen agree to float rounding (3 AdamW steps).
  std::mt19937_64 rng(3);
  std::vector<Document> docs;
  for (int d = 0; d < 3; ++d) {
    std::vector<int32_t> ids;
    for (int t = 0; t < 200; ++t) ids.push_back(static_cast<int32_t>('a' + rng() % 5));
    docs.push_back({"d", ids});
  }
  auto run = [&] {
    auto m = tiny(4);
    place_model(m, default_compute());  // the process default: the model carries its scan
    EXPECT_EQ(m->fused_scan, default_compute().fused());
    TrainOptions o;
    o.steps = 3; o.batch = 2; o.T = 16; o.seed = 1;
    PolicySpec ps;
    ps.kind = "passing";  // an initial state flows through the scan too
    auto pol = make_policy(ps, 1);
    return train(m, docs, *pol, o).history;
  };
  set_scan_kernels("fused");
  EXPECT_EQ(compute_summary(), "cpu fp32 loop-scan");
  const auto loops = run();
  set_scan_kernels("aten");
  EXPECT_EQ(compute_summary(), "cpu fp32");
  const auto aten = run();
  ASSERT_EQ(loops.size(), aten.size());
  for (size_t i = 0; i < loops.size(); ++i) {
    EXPECT_NEAR(loops[i].loss, aten[i].loss, 1e-5) << "step " << i + 1;
    EXPECT_NEAR(loops[i].grad_norm, aten[i].grad_norm, 1e-4 * (1 + aten[i].grad_norm)) << "step " << i + 1;
  }
}

TEST(Precision, Bf16ForwardIsCloseAndKeepsStateAndLogitsInFp32) {
  auto m = tiny(5);
  torch::NoGradGuard ng;
  auto tokens = torch::randint(0, 256, {2, 37}, torch::TensorOptions().dtype(torch::kInt64));
  auto h0 = m->zero_state(2);
  for (auto& l : h0) l.ssm.normal_(0, 0.5);
  ForwardOptions fo;
  fo.state_norms = true;
  auto ref = m->forward(tokens, &h0, fo);
  m->mixed_bf16 = true;
  auto mixed = m->forward(tokens, &h0, fo);
  m->mixed_bf16 = false;
  EXPECT_EQ(mixed.logits.scalar_type(), torch::kFloat32);
  EXPECT_EQ(mixed.final_state[0].ssm.scalar_type(), torch::kFloat32);
  EXPECT_EQ(mixed.norm.scalar_type(), torch::kFloat32);
  for (auto& p : m->parameters()) EXPECT_EQ(p.scalar_type(), torch::kFloat32);
  const double scale = ref.logits.abs().max().item<double>();
  const double diff = (mixed.logits - ref.logits).abs().max().item<double>();
  EXPECT_GT(diff, 0.0) << "bf16 was not used";
  EXPECT_LT(diff, 0.03 * scale) << "bf16 logits differ by " << diff << " (max |logit| " << scale << ")";
  for (int l = 0; l < 2; ++l) {
    const double sd = (mixed.final_state[l].ssm - ref.final_state[l].ssm).abs().max().item<double>();
    const double ss = ref.final_state[l].ssm.abs().max().item<double>();
    EXPECT_LT(sd, 0.03 * ss) << "layer " << l;
  }
  // The autocast scope ends with the forward.
  EXPECT_FALSE(at::autocast::is_autocast_enabled(at::kCPU));
  auto after = m->forward(tokens, &h0, fo);
  EXPECT_TRUE(torch::equal(after.logits, ref.logits));
}

TEST(Precision, Bf16TrainingLearnsWithFp32MasterWeights) {
  ComputeGuard g;
  IsaGuard isa("emulated");  // the bf16 path on any CPU
  set_compute("cpu", "bf16");
  auto m = tiny(6);
  place_model(m, default_compute());
  ASSERT_TRUE(m->mixed_bf16);
  std::mt19937_64 rng(3);
  std::vector<Document> docs;
  for (int d = 0; d < 4; ++d) {
    std::vector<int32_t> ids;
    for (int t = 0; t < 400; ++t) ids.push_back(static_cast<int32_t>('a' + (t * 7 + d) % 5));  // learnable
    docs.push_back({"d", ids});
  }
  TrainOptions o;
  o.steps = 25; o.batch = 4; o.T = 32; o.lr = 1e-2; o.warmup = 2; o.seed = 1;
  PolicySpec ps;
  ps.kind = "passing";
  auto policy = make_policy(ps, 1);
  auto r = train(m, docs, *policy, o);
  ASSERT_EQ(r.status, "finished") << r.message;
  EXPECT_LT(r.history.back().loss, 0.5 * r.history.front().loss);
  for (auto& p : m->parameters()) EXPECT_EQ(p.scalar_type(), torch::kFloat32);
}

TEST(Precision, CpuBf16SaysWhichUnitsItUsesAndRunsFp32WithoutThem) {
  const std::string detected = cpu_bf16_isa();
  EXPECT_TRUE(detected == "AMX" || detected == "AVX512-BF16" || detected.empty()) << detected;
  std::cout << "[bf16] this CPU: " << (detected.empty() ? "neither AMX nor AVX512-BF16" : detected) << "\n";
  const Compute c = make_compute("cpu", "bf16", "auto");
  {
    IsaGuard g("");
    EXPECT_TRUE(c.bf16_fallback());
    EXPECT_EQ(c.effective_precision(), "fp32");
    EXPECT_EQ(c.summary(), "cpu fp32 loop-scan (bf16 asked: this CPU has neither AMX nor AVX512-BF16)");
    auto m = tiny(7);
    place_model(m, c);
    EXPECT_FALSE(m->mixed_bf16) << "bf16 emulated would be slower than fp32";
  }
  {
    IsaGuard g("AVX512-BF16");
    EXPECT_FALSE(c.bf16_fallback());
    EXPECT_EQ(c.summary(), "cpu bf16 AVX512-BF16 loop-scan");
    auto m = tiny(7);
    place_model(m, c);
    EXPECT_TRUE(m->mixed_bf16);
  }
  {
    IsaGuard g("AMX");
    EXPECT_EQ(make_compute("cpu", "bf16", "aten").summary(), "cpu bf16 AMX");
    EXPECT_EQ(make_compute("cpu", "fp32", "auto").summary(), "cpu fp32 loop-scan");  // fp32 names no bf16 units
  }
}

TEST(Precision, CpuBf16DenseIsTheBf16MatmulOnOddSizes) {
  namespace F = torch::nn::functional;
  torch::manual_seed(11);
  torch::NoGradGuard ng;
  for (auto [rows, in, out] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {7, 13, 5}, {33, 65, 129}, {2, 768, 3}}) {
    auto x = torch::randn({2, rows, in}), w = torch::randn({out, in}), b = torch::randn({out});
    const auto ref = F::linear(x, w, b);                              // [2, rows, out]
    EXPECT_TRUE(torch::equal(dense(x, w, b), ref)) << "outside the scope dense is F::linear";
    CpuBf16Scope s;
    const auto y = dense(x, w, b);
    EXPECT_EQ(y.scalar_type(), torch::kFloat32);
    // Exactly the bf16 matmul of the rounded operands, bias added in fp32 ...
    EXPECT_TRUE(torch::equal(y, F::linear(x.to(torch::kBFloat16), w.to(torch::kBFloat16)).to(torch::kFloat32) + b));
    // ... and within bf16 rounding of fp32: |err| <= ~3 * 2^-8 * sum |x||w|.
    const auto bound = F::linear(x.abs(), w.abs()) * (3.0 / 256) + 1e-6;
    EXPECT_TRUE(((y - ref).abs() <= bound).all().item<bool>()) << rows << "x" << in << "x" << out;
    EXPECT_TRUE(torch::equal(dense(x.to(torch::kFloat64), w.to(torch::kFloat64)).to(torch::kFloat32),
                             F::linear(x.to(torch::kBFloat16), w.to(torch::kBFloat16)).to(torch::kFloat32)))
        << "a float64 input gets the bf16 matmul too and its own dtype back";
  }
}

TEST(Precision, CpuBf16KeepsOneCopyPerWeightVersion) {
  namespace F = torch::nn::functional;
  torch::manual_seed(12);
  torch::NoGradGuard ng;
  auto x = torch::randn({3, 17});
  auto bf = [&](const torch::Tensor& w) {
    return F::linear(x.to(torch::kBFloat16), w.to(torch::kBFloat16)).to(torch::kFloat32);
  };
  CpuBf16Scope s;
  const size_t before = dense_bf16_cached();
  {
    auto w = torch::randn({9, 17});
    dense(x, w);
    EXPECT_EQ(dense_bf16_cached(), before + 1);
    dense(x, w);
    EXPECT_EQ(dense_bf16_cached(), before + 1) << "a second call casts nothing";
    w.add_(0.5);  // an optimizer step or a load: the version moves, the copy is made again
    EXPECT_TRUE(torch::equal(dense(x, w), bf(w)));
    w.set_data(torch::randn({9, 17}));  // new storage under the same tensor
    EXPECT_TRUE(torch::equal(dense(x, w), bf(w)));
    EXPECT_EQ(dense_bf16_cached(), before + 1);
  }
  EXPECT_EQ(dense_bf16_cached(), before) << "a weight that died keeps no copy alive";
}

TEST(Precision, CpuBf16TrainingRunsTheBackwardInBf16OntoFp32Weights) {
  namespace F = torch::nn::functional;
  torch::manual_seed(13);
  auto x = torch::randn({5, 11}), w = torch::randn({7, 11}).requires_grad_(), b = torch::randn({7}).requires_grad_();
  const size_t before = dense_bf16_cached();
  {
    CpuBf16Scope s;
    dense(x, w, b).square().sum().backward();
  }
  EXPECT_EQ(dense_bf16_cached(), before) << "training casts in the graph, caches nothing";
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().scalar_type(), torch::kFloat32);
  // d/dW sum(y^2) = 2 y^T x, with y and the product in bf16: close to fp32's, not equal.
  auto wr = w.detach().clone().requires_grad_(), br = b.detach().clone().requires_grad_();
  F::linear(x, wr, br).square().sum().backward();
  const double scale = wr.grad().abs().max().item<double>();
  const double diff = (w.grad() - wr.grad()).abs().max().item<double>();
  EXPECT_GT(diff, 0.0) << "the backward did not run in bf16";
  EXPECT_LT(diff, 0.03 * scale);
  EXPECT_LT((b.grad() - br.grad()).abs().max().item<double>(), 0.03 * br.grad().abs().max().item<double>());
}
