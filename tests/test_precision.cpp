// test_precision.cpp — device selection and bf16 mixed precision: a GPU asked for and absent is a
// clear error; bf16 forward stays close to fp32 with the SSM state, logits and loss in fp32; training
// under bf16 keeps fp32 master weights and learns.
#include <gtest/gtest.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <random>

#include "core/model/checkpoint.h"
#include "core/model/mamba2/model.h"
#include "core/base/error.h"
#include "core/compute/runtime.h"
#include "core/train/state_policy.h"
#include "core/train/trainer.h"

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
