// test_golden.cpp — the C++ model against transformers' Mamba2ForCausalLM (tests/golden/, made by
// make_golden.py): logits, loss, final SSM and conv states, a multi-token continuation from the
// final state and single-token steps, for untied, tied, ngroups=2 and the mamba_ssm layout.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/checkpoint.h"
#include "core/store/h5file.h"
#include "tests/golden_util.h"
#include "tests/recurrent_checks.h"
#include "tests/test_util.h"

using namespace statescope;
using namespace statescope::test;

namespace {

void check_states(const ModelState& s, const torch::Tensor& ssm, const torch::Tensor& conv, const std::string& what) {
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_TRUE(close(s[i].ssm, ssm[i], 1e-4, what + " ssm layer " + std::to_string(i)));
    EXPECT_TRUE(close(s[i].conv, conv[i], 1e-4, what + " conv layer " + std::to_string(i)));
  }
}

void check_against(const std::string& model_dir, const std::string& golden_dir, ScanImpl scan) {
  auto model = load_model_dir(kGolden + model_dir, default_compute());
  H5File g(kGolden + golden_dir + "/golden.h5", H5File::Mode::Read);
  torch::NoGradGuard ng;
  ForwardOptions opt;
  opt.scan = scan;
  auto ids = read(g, "input_ids");  // [2, 45]
  auto out = model->forward(ids, nullptr, opt);
  auto ref = read(g, "logits");
  std::cout << "[golden] " << model_dir << ": worst |logit diff| " << (out.logits - ref).abs().max().item<double>()
            << ", max |logit| " << ref.abs().max().item<double>() << "\n";
  expect_logits_and_loss(out, ids, g, model_dir);
  check_states(out.final_state, read(g, "final_ssm_state"), read(g, "final_conv_state"), "final");

  // Continue from the final state: 7 tokens at once, then 3 single tokens.
  auto next = model->forward(read(g, "next_ids"), &out.final_state, opt);
  EXPECT_TRUE(close(next.logits, read(g, "next_logits"), 1e-4, "continuation logits"));
  ModelState s = next.final_state;
  EXPECT_TRUE(close(step_through(model, read(g, "step_ids"), s, opt), read(g, "step_logits"), 1e-4, "step logits"));
  check_states(s, read(g, "after_steps_ssm_state"), read(g, "after_steps_conv_state"), "after steps");
}

}  // namespace

TEST(Golden, UntiedChunked) { check_against("hf-untied", "hf-untied", ScanImpl::Chunked); }
TEST(Golden, UntiedSequential) { check_against("hf-untied", "hf-untied", ScanImpl::Sequential); }
TEST(Golden, TwoGroupsNormalisedPerGroup) { check_against("hf-groups2", "hf-groups2", ScanImpl::Chunked); }
TEST(Golden, Tied) { check_against("hf-tied", "hf-tied", ScanImpl::Chunked); }
// The same tied weights in mamba_ssm layout: pytorch_model.bin, backbone.embedding.weight, vocab 60
// padded to 64, lm_head.weight stored as a second name for the embedding.
// It was written as mamba_ssm writes it: torch.save(model.state_dict()), an OrderedDict with _metadata.
TEST(Golden, MambaSsmLayoutMatchesHf) { check_against("ssm-tied", "hf-tied", ScanImpl::Chunked); }

// Checkpoints from the writers users have (make_wild_checkpoints.py): torch.save(module.state_dict())
// in mamba_ssm layout (fp16, bf16), transformers 5 save_pretrained (fp16, bf16, sharded safetensors),
// transformers 4 save_pretrained(safe_serialization=False) (.bin fp32, bf16, sharded .bin + index).
// Each gives the logits its writer's own model computes from those weights, to 1e-4.
TEST(Golden, CheckpointsFromRealWritersLoadAndMatch) {
  const char* dirs[] = {"ssm-statedict-fp16", "ssm-statedict-bf16", "hf5-fp16", "hf5-bf16", "hf5-sharded",
                        "hf4-bin-fp32", "hf4-bin-bf16", "hf4-bin-sharded"};
  for (const char* d : dirs) {
    SCOPED_TRACE(d);
    const std::string dir = kGolden + "wild/" + d;
    auto model = load_model_dir(dir, default_compute());
    H5File g(dir + "/golden.h5", H5File::Mode::Read);
    torch::NoGradGuard ng;
    auto out = model->forward(read(g, "ids"));
    auto ref = read(g, "logits");
    EXPECT_TRUE(close(out.logits, ref, 1e-4, std::string("logits of ") + d));
    std::cout << "[golden] wild/" << d << " (" << g.attr("/", "writer") << "): worst |logit diff| "
              << (out.logits - ref).abs().max().item<double>() << "\n";
  }
}

TEST(Golden, TransformersFourNormDiffersForTwoGroups) {
  // Sanity of the test itself: normalising over all of d_inner (transformers 4.x) gives other logits.
  auto model = load_model_dir(kGolden + "hf-groups2", default_compute());
  auto cfg = m2cfg(model);
  cfg.norm_per_group = false;
  RecurrentLM other = Mamba2LM(cfg);
  torch::NoGradGuard ng;
  auto src = model->named_parameters();
  for (auto& p : other->named_parameters()) p.value().copy_(src[p.key()]);
  H5File g(kGolden + "hf-groups2/golden.h5", H5File::Mode::Read);
  EXPECT_FALSE(close(other->forward(read(g, "input_ids")).logits, read(g, "logits"), 1e-3, "4.x norm"));
}

// The other direction: transformers loaded statescope's saved embedded model (with time_step_limit
// (0, 0.02), so the dt clamp is exercised) and produced these logits (check_hf_loads_ours.py).
TEST(Golden, TransformersLoadsOurSavedModelAndAgrees) {
  auto model = load_model_dir(std::string(STATESCOPE_SOURCE_DIR) + "/data/models/embedded", default_compute());
  ASSERT_TRUE(m2cfg(model).has_dt_limit());
  H5File g(kGolden + "embedded-hf.h5", H5File::Mode::Read);
  torch::NoGradGuard ng;
  auto ids = read(g, "input_ids");
  for (auto scan : {ScanImpl::Chunked, ScanImpl::Sequential}) {
    auto out = model->forward(ids, nullptr, {scan});
    EXPECT_TRUE(close(out.logits, read(g, "logits"), 1e-4, "logits"));
    const int64_t V = out.logits.size(-1), L = ids.size(1);
    auto loss = torch::nn::functional::cross_entropy(out.logits.narrow(1, 0, L - 1).reshape({-1, V}),
                                                     ids.narrow(1, 1, L - 1).reshape({-1}));
    EXPECT_NEAR(loss.item<double>(), read(g, "loss")[0].item<double>(), 1e-4);
  }
}
