// test_cli.cpp — `statescope-cli forward` end to end against the golden reference, and its
// refusals: each bad input gives a non-zero exit and one line naming the file and the field.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <limits>
#include <chrono>
#include <thread>
#include <cstdio>
#include <filesystem>
#include <cmath>
#include <fstream>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/model/checkpoint.h"
#include "core/model/model_config.h"
#include <nlohmann/json.hpp>
#include <sstream>
#include "core/model/model_registry.h"
#include "core/store/experiment_store.h"
#include "core/store/h5file.h"
#include "tests/cli_process.h"
#include "tests/scratch.h"
#include "tests/test_util.h"
#include "tests/run_statuses.h"
#include "core/analyses/unexplored/record.h"

using namespace statescope;
using statescope::test::close;
namespace fs = std::filesystem;

namespace {

const std::string kGolden = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/";

struct Run { int code; std::string output; };

Run cli(const std::string& args) {
  const std::string cmd = std::string(STATESCOPE_CLI) + " " + args + " 2>&1";
  Run r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), p)) r.output += buf.data();
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

torch::Tensor read(const std::string& path, const std::string& name) {
  H5File f(path, H5File::Mode::Read);
  std::vector<int64_t> d;
  auto v = f.read_f32(name, &d);
  return torch::from_blob(v.data(), d, torch::kFloat32).clone();
}

std::string tmp(const std::string& name) { return statescope::test::scratch("statescope_cli_" + name); }

// Two model folders hold the same tensors, bit for bit.
void expect_same_weights(const std::string& dir_a, const std::string& dir_b) {
  const auto a = read_weights_file(dir_a + "/model.safetensors"), b = read_weights_file(dir_b + "/model.safetensors");
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) EXPECT_TRUE(b.count(name) && torch::equal(t, b.at(name))) << name;
}

// A forward input at `path`: input_ids [B, len] from ids ([B, n] flattened; d = {B, n}) at `from`, and
// each final_<name> dataset of `state_from` as initial_<name> (none when state_from is empty).
void write_piece(const std::string& path, const std::vector<int64_t>& ids, const std::vector<int64_t>& d, int64_t from,
                 int64_t len, const std::string& state_from, const std::vector<std::string>& names) {
  H5File f(path, H5File::Mode::Create);
  std::vector<int64_t> part;
  for (int64_t b = 0; b < d[0]; ++b)
    for (int64_t t = from; t < from + len; ++t) part.push_back(ids[b * d[1] + t]);
  f.write("input_ids", part.data(), {d[0], len});
  if (state_from.empty()) return;
  for (const auto& k : names) {
    std::vector<int64_t> sd;
    auto v = H5File(state_from, H5File::Mode::Read).read_f32("final_" + k, &sd);
    f.write("initial_" + k, v.data(), sd);
  }
}

// Writes an input file from golden datasets: ids from `ids_name`, optional initial states.
std::string make_input(const std::string& name, const std::string& ids_name, bool with_state,
                       const std::vector<int64_t>& ssm_shape_override = {}) {
  H5File g(kGolden + "hf-untied/golden.h5", H5File::Mode::Read);
  const auto path = tmp(name);
  H5File f(path, H5File::Mode::Create);
  std::vector<int64_t> d;
  auto ids = g.read_i64(ids_name, &d);
  f.write("input_ids", ids.data(), d);
  if (with_state) {
    auto ssm = g.read_f32("final_ssm_state", &d);
    if (!ssm_shape_override.empty()) d = ssm_shape_override;
    f.write("initial_ssm_state", ssm.data(), d);
    auto conv = g.read_f32("final_conv_state", &d);
    f.write("initial_conv_state", conv.data(), d);
  }
  return path;
}

}  // namespace

TEST(Cli, ForwardMatchesGolden) {
  const auto in = make_input("in.h5", "input_ids", false), out = tmp("out.h5");
  auto r = cli("forward --model " + kGolden + "hf-untied --input " + in + " --output " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto g = kGolden + "hf-untied/golden.h5";
  EXPECT_TRUE(close(read(out, "logits"), read(g, "logits"), 1e-4, "logits"));
  EXPECT_TRUE(close(read(out, "final_ssm_state"), read(g, "final_ssm_state"), 1e-4, "ssm"));
  EXPECT_TRUE(close(read(out, "final_conv_state"), read(g, "final_conv_state"), 1e-4, "conv"));
  auto norm = read(out, "ssm_state_norm");  // [n_layer, B, L]
  EXPECT_EQ(norm.sizes().vec(), (std::vector<int64_t>{2, 2, 45}));
  // The last position's norm is the norm of the final state.
  auto fin = read(out, "final_ssm_state");  // [n_layer, B, H, P, N]
  EXPECT_TRUE(close(norm.select(2, 44), fin.square().sum({2, 3, 4}).sqrt(), 1e-5, "norm of final state"));
}

// fla's GLA and Gated DeltaNet through `forward`: the golden file itself is the input (input_ids and
// the initial states in statescope's layout, key first, q|k|v conv channels), so the CLI reads them
// under their documented names; logits and final states equal fla's from those states.
TEST(Cli, ForwardRunsFlaModelsFromTheirInitialStates) {
  for (const char* dir : {"fla-gla", "fla-gdn", "fla-gdn-plain"}) {
    const auto g = kGolden + dir + "/golden.h5", out = tmp(std::string("fla_") + dir + ".h5");
    auto r = cli("forward --model " + kGolden + dir + " --input " + g + " --output " + out);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(close(read(out, "logits"), read(g, "logits_from_state"), 1e-4, std::string(dir) + " logits"));
    EXPECT_TRUE(close(read(out, "final_ssm_state"), read(g, "final_ssm_state_from_state"), 1e-4, std::string(dir) + " ssm"));
    H5File f(out, H5File::Mode::Read), gf(g, H5File::Mode::Read);
    EXPECT_EQ(f.has("final_conv_state"), gf.has("final_conv_state_from_state")) << dir;
    if (gf.has("final_conv_state_from_state"))
      EXPECT_TRUE(close(read(out, "final_conv_state"), read(g, "final_conv_state_from_state"), 1e-5, std::string(dir) + " conv"));
    auto fin = read(out, "final_ssm_state");  // [n_layer, B, heads, head_k_dim, head_v_dim]
    EXPECT_TRUE(close(read(out, "ssm_state_norm_per_head").select(2, 44), fin.square().sum({3, 4}).sqrt(), 1e-5,
                      std::string(dir) + " norm of the final state"));
  }
}

TEST(Cli, AHuggingFaceIdRunsTheCachedSnapshotAndModelsListsThem) {
  // The cache huggingface_hub wrote (tests/golden/make_hf_cache.py); main holds hf-groups2's files.
  const char* old = std::getenv("HF_HUB_CACHE");
  const std::string saved = old ? old : "";
  ::setenv("HF_HUB_CACHE", (kGolden + "hf-cache/hub").c_str(), 1);
  const auto in = make_input("in_hub.h5", "input_ids", false), by_id = tmp("by_id.h5"), by_dir = tmp("by_dir.h5");
  auto r = cli("forward --model statescope-test/tiny-mamba2 --input " + in + " --output " + by_id);
  ASSERT_EQ(r.code, 0) << r.output;
  ASSERT_EQ(cli("forward --model " + kGolden + "hf-groups2 --input " + in + " --output " + by_dir).code, 0);
  EXPECT_TRUE(close(read(by_id, "logits"), read(by_dir, "logits"), 0, "logits"));
  r = cli("info --model statescope-test/tiny-mamba1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("snapshots/cccccccc33333333333333333333333333333333"), std::string::npos) << r.output;
  r = cli("models");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("statescope-test/tiny-mamba2  Mamba-2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("statescope-test/tiny-mamba2@v1  Mamba-2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("statescope-test/tiny-mamba1  Mamba-1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3 other cached repositories left out"), std::string::npos) << r.output;
  r = cli("models --all");
  EXPECT_NE(r.output.find("skipped statescope-test/not-a-mamba"), std::string::npos) << r.output;
  // Not cached: a non-zero exit that says where it looked and how to download; nothing is fetched.
  r = cli("info --model state-spaces/mamba2-130m");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("models--state-spaces--mamba2-130m"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("huggingface-cli download state-spaces/mamba2-130m"), std::string::npos) << r.output;
  old ? (void)::setenv("HF_HUB_CACHE", saved.c_str(), 1) : (void)::unsetenv("HF_HUB_CACHE");
}

TEST(Cli, AttentionWritesEveryHeadsMatrixAndMamba1sChannelGroups) {
  const auto out = tmp("attention.h5");
  auto r = cli("attention --model embedded --text \"It is a truth universally acknowledged\" --layer 1 -o " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  H5File f(out, H5File::Mode::Read);
  EXPECT_EQ(f.dims("tokens"), (std::vector<int64_t>{38}));
  EXPECT_EQ(f.dims("M"), (std::vector<int64_t>{8, 38, 38}));
  EXPECT_EQ(f.dims("init"), (std::vector<int64_t>{8, 38}));
  EXPECT_EQ(f.attr("/", "heads"), "0,1,2,3,4,5,6,7");
  EXPECT_NE(f.attr("/", "command").find("attention --model embedded"), std::string::npos);
  r = cli("attention --model embedded-mamba1 --text abcdef --head 0 -o " + tmp("attention_m1.h5"));  // a channel group
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(H5File(tmp("attention_m1.h5"), H5File::Mode::Read).dims("M"), (std::vector<int64_t>{1, 6, 6}));
  r = cli("attention --model embedded --text abc --layer 7 -o " + tmp("attention_bad.h5"));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("layer 7 is outside 0..1"), std::string::npos) << r.output;
}

TEST(Cli, ForwardFromInitialStates) {
  const auto in = make_input("in_state.h5", "next_ids", true), out = tmp("out_state.h5");
  auto r = cli("forward --model " + kGolden + "hf-untied --scan sequential --input " + in + " --output " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(close(read(out, "logits"), read(kGolden + "hf-untied/golden.h5", "next_logits"), 1e-4, "logits"));
}

// `forward` on a hybrid (Nemotron-H, Qwen3.5 from transformers' save_pretrained): logits against
// transformers, the recurrent layers' states and the attention layers' caches written (final_keys,
// final_values [attention layers, B, kv_heads, positions, head_dim]) with every layer's kind named,
// and a second piece from the first's states and caches equal to the one pass; keys without values
// refused by name.
TEST(Cli, ForwardOnHybridsHandsOverStatesAndCaches) {
  for (const std::string dir : {"hf-nemotron-h", "hf-qwen3-5"}) {
    const std::string model = kGolden + dir, g = kGolden + dir + "/golden.h5";
    std::vector<int64_t> d;
    const auto ids = H5File(g, H5File::Mode::Read).read_i64("input_ids", &d);  // [2, 21]
    auto write_ids = [&](const std::string& path, int64_t from, int64_t len, const std::string& state_from) {
      write_piece(path, ids, d, from, len, state_from, {"ssm_state", "conv_state", "keys", "values"});
    };
    const auto whole_in = tmp(dir + "_whole_in.h5"), whole = tmp(dir + "_whole.h5");
    write_ids(whole_in, 0, 21, "");
    auto r = cli("forward --model " + model + " --input " + whole_in + " --output " + whole);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(close(read(whole, "logits"), read(g, "logits"), 1e-4, dir + " logits vs transformers"));
    EXPECT_EQ(read(whole, "final_keys").sizes().vec(), (std::vector<int64_t>{1, 2, 2, 21, 16})) << dir;
    EXPECT_EQ(read(whole, "final_ssm_state").size(0), 2) << dir << ": the recurrent layers";
    H5File wf(whole, H5File::Mode::Read);
    EXPECT_EQ(wf.attr("/", "layer_kinds"), dir == "hf-nemotron-h" ? R"(["mamba2", "mlp", "attention", "moe", "mamba2"])"
                                                                 : R"(["gated_deltanet", "attention", "gated_deltanet"])");
    EXPECT_EQ(wf.attr("/", "attention_layers"), dir == "hf-nemotron-h" ? "2" : "1");  // (a list of one reads as its text)
    const auto a_in = tmp(dir + "_a_in.h5"), a = tmp(dir + "_a.h5"), b_in = tmp(dir + "_b_in.h5"), b = tmp(dir + "_b.h5");
    write_ids(a_in, 0, 13, "");
    ASSERT_EQ(cli("forward --model " + model + " --input " + a_in + " --output " + a).code, 0);
    EXPECT_TRUE(close(read(a, "final_keys"), read(g, "piece_a_keys"), 1e-4, dir + " keys vs transformers"));
    write_ids(b_in, 13, 8, a);
    r = cli("forward --model " + model + " --input " + b_in + " --output " + b);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(close(read(b, "logits"), read(g, "piece_b_logits"), 1e-4, dir + " second piece vs transformers"));
    EXPECT_TRUE(close(torch::cat({read(a, "logits"), read(b, "logits")}, 1), read(whole, "logits"), 1e-4, dir + " pieces"));
    EXPECT_TRUE(close(read(b, "final_values"), read(whole, "final_values"), 1e-4, dir + " pieces values"));
    const auto c_in = tmp(dir + "_c_in.h5");
    {  // keys without values
      H5File f(c_in, H5File::Mode::Create);
      std::vector<int64_t> sd;
      auto v = H5File(a, H5File::Mode::Read).read_f32("final_keys", &sd);
      f.write("initial_keys", v.data(), sd);
      std::vector<int64_t> piece(2 * 8, 1);
      f.write("input_ids", piece.data(), {2, 8});
    }
    r = cli("forward --model " + model + " --input " + c_in + " --output " + tmp(dir + "_c.h5"));
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.output.find("dataset 'initial_values' is missing"), std::string::npos) << r.output;
  }
}

// `forward` on a Mamba-1 (mamba_ssm layout): logits and final states against transformers, datasets
// shaped by the layout ((layer, batch, d_inner, d_state) and (layer, batch, d_inner, d_conv-1), axes
// named in attributes), and two pieces with the states handed over equal the one pass.
TEST(Cli, ForwardOnMamba1InPiecesEqualsOnePass) {
  const std::string model = kGolden + "ssm-mamba1", g = kGolden + "ssm-mamba1/golden.h5";
  std::vector<int64_t> d;
  const auto ids = H5File(g, H5File::Mode::Read).read_i64("input_ids", &d);  // [2, 45]
  auto write_ids = [&](const std::string& path, int64_t from, int64_t len, const std::string& state_from) {
    write_piece(path, ids, d, from, len, state_from, {"ssm_state", "conv_state"});
  };
  const auto whole_in = tmp("m1_whole_in.h5"), whole = tmp("m1_whole.h5");
  write_ids(whole_in, 0, 45, "");
  auto r = cli("forward --model " + model + " --input " + whole_in + " --output " + whole);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(close(read(whole, "logits"), read(g, "logits"), 1e-4, "logits vs transformers"));
  EXPECT_EQ(read(whole, "final_ssm_state").sizes().vec(), (std::vector<int64_t>{2, 2, 48, 6}));
  EXPECT_EQ(read(whole, "final_conv_state").sizes().vec(), (std::vector<int64_t>{2, 2, 48, 3}));
  EXPECT_TRUE(close(read(whole, "final_ssm_state"), read(g, "final_ssm_state"), 1e-4, "ssm vs transformers"));
  EXPECT_TRUE(close(read(whole, "final_conv_state"), read(g, "final_conv_state"), 1e-4, "conv vs transformers"));
  EXPECT_EQ(read(whole, "ssm_state_norm").sizes().vec(), (std::vector<int64_t>{2, 2, 45}));
  H5File wf(whole, H5File::Mode::Read);
  EXPECT_EQ(wf.attr("/", "architecture"), "mamba1");
  EXPECT_EQ(wf.attr("/", "ssm_state_axes"), "(layer, batch, d_inner, d_state)");
  const auto a_in = tmp("m1_a_in.h5"), a = tmp("m1_a.h5"), b_in = tmp("m1_b_in.h5"), b = tmp("m1_b.h5");
  write_ids(a_in, 0, 17, "");
  ASSERT_EQ(cli("forward --model " + model + " --input " + a_in + " --output " + a).code, 0);
  write_ids(b_in, 17, 28, a);
  r = cli("forward --model " + model + " --input " + b_in + " --output " + b);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(close(torch::cat({read(a, "logits"), read(b, "logits")}, 1), read(whole, "logits"), 1e-4, "pieces logits"));
  EXPECT_TRUE(close(read(b, "final_ssm_state"), read(whole, "final_ssm_state"), 1e-4, "pieces ssm"));
  EXPECT_TRUE(close(read(b, "final_conv_state"), read(whole, "final_conv_state"), 1e-4, "pieces conv"));
  EXPECT_TRUE(close(torch::cat({read(a, "ssm_state_norm"), read(b, "ssm_state_norm")}, 2), read(whole, "ssm_state_norm"),
                    1e-4, "pieces norms"));
}

TEST(Cli, Help) {
  auto r = cli("forward --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("input_ids"), std::string::npos);
  EXPECT_NE(r.output.find("ssm_state_norm"), std::string::npos);
}

TEST(Cli, VersionAndUnwritableOutputRefusedBeforeTheRun) {
  auto v = cli("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.output.find("statescope-cli (statescope) "), std::string::npos) << v.output;
  // A missing folder, and a file where a folder should be: refused at once, naming the folder.
  const std::string spec = std::string(STATESCOPE_SOURCE_DIR) + "/data/experiments/demo.json";
  auto r = cli("run " + spec + " -o /nonexistent-statescope/sub/out.h5");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("the folder /nonexistent-statescope/sub does not exist (nothing was run)"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("post-train"), std::string::npos) << "work started before the output was checked: " << r.output;
  const std::string file = tmp("a_file.txt");
  std::ofstream(file) << "x";
  r = cli("eval --model embedded --length 64 --sequences 1 -o " + file + "/out.h5");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(file + " is not a folder"), std::string::npos) << r.output;
}

// `eval --no-reference --no-state-norms`: the full pass alone (the long-context measurement's mode):
// the same per-position losses as with the reference and norms, neither's datasets, and the output
// says which.
TEST(Cli, EvalWithoutTheReferenceScoresTheSameFullPass) {
  const std::string with = tmp("eval_ref.h5"), without = tmp("eval_noref.h5");
  const std::string args = "eval --model embedded --length 96 --sequences 2 --segment 32 --batch 2 --overwrite -o ";
  auto a = cli(args + with), b = cli(args + without + " --no-reference --no-state-norms");
  ASSERT_EQ(a.code, 0) << a.output;
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_NE(a.output.find("with the state-reset reference"), std::string::npos) << a.output;
  EXPECT_NE(b.output.find("full pass only"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find(" positions/s"), std::string::npos) << b.output;
  H5File fa(with, H5File::Mode::Read), fb(without, H5File::Mode::Read);
  EXPECT_EQ(fa.read_f64("eval/ppl/nll"), fb.read_f64("eval/ppl/nll"));
  EXPECT_TRUE(fa.has("eval/ppl/windowed_nll"));
  EXPECT_FALSE(fb.has("eval/ppl/windowed_nll"));
  EXPECT_TRUE(fa.has("eval/state_norm/norm_per_head"));
  EXPECT_FALSE(fb.has("eval/state_norm"));
  EXPECT_NE(b.output.find("no state norms"), std::string::npos) << b.output;
}

TEST(Cli, RefusesBadInput) {
  const auto model = kGolden + "hf-untied";
  auto r = cli("forward --input x.h5 --output y.h5");
  EXPECT_EQ(r.code, 2) << r.output;
  r = cli("forward --model " + model + " --input /nonexistent/in.h5 --output " + tmp("o.h5"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("/nonexistent/in.h5"), std::string::npos) << r.output;
  r = cli("forward --model /nonexistent/model --input x.h5 --output " + tmp("o.h5"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("/nonexistent/model"), std::string::npos) << r.output;

  // Token ids out of range.
  {
    const auto p = tmp("bad_ids.h5");
    H5File f(p, H5File::Mode::Create);
    std::vector<int64_t> ids{1, 2, 64};
    f.write("input_ids", ids.data(), {1, 3});
  }
  r = cli("forward --model " + model + " --input " + tmp("bad_ids.h5") + " --output " + tmp("o.h5"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("input_ids"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("token id 64"), std::string::npos) << r.output;

  // No input_ids dataset.
  {
    const auto p = tmp("no_ids.h5");
    H5File f(p, H5File::Mode::Create);
    std::vector<float> x{1};
    f.write("tokens", x.data(), {1});
  }
  r = cli("forward --model " + model + " --input " + tmp("no_ids.h5") + " --output " + tmp("o.h5"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("'input_ids' not found"), std::string::npos) << r.output;

  // Initial state of the wrong shape (the golden [2, 2, 8, 8, 8] read as [2, 2, 8, 16, 4]).
  const auto bad = make_input("bad_state.h5", "next_ids", true, {2, 2, 8, 16, 4});
  r = cli("forward --model " + model + " --input " + bad + " --output " + tmp("o.h5"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("initial_ssm_state"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("expected [2, 2, 8, 8, 8]"), std::string::npos) << r.output;
  // Exactly one line of error.
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;

  // A NaN in an initial state is named by file and dataset.
  {
    const auto p = make_input("nan_state.h5", "next_ids", true);
    H5File f(p, H5File::Mode::ReadWrite);
    std::vector<int64_t> d;
    auto ssm = f.read_f32("initial_ssm_state", &d);
    ssm[7] = std::numeric_limits<float>::quiet_NaN();
    f.write("initial_ssm_state", ssm.data(), d);
  }
  r = cli("forward --model " + model + " --input " + tmp("nan_state.h5") + " --output " + tmp("o.h5"));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("nan_state.h5: dataset 'initial_ssm_state' holds 1 non-finite values"), std::string::npos)
      << r.output;
}

// A training process killed with SIGKILL mid-run leaves a record that opens, with the steps it
// logged and status "running" (the status is written last, so a half-written run is recognisable).
// It is in the work folder OUT.partial: OUT itself appears only when training ends (the output rule).
TEST(Cli, KilledRunLeavesAReadableRecord) {
  const auto out = tmp("killed_model");
  fs::remove_all(out);
  fs::remove_all(out + ".partial");
  const std::string cmd = "timeout -s KILL 4 " + std::string(STATESCOPE_CLI) + " posttrain --model " +
                          std::string(STATESCOPE_SOURCE_DIR) + "/data/models/embedded --out " + out +
                          " --steps 100000 --batch 4 --policy passing > /dev/null 2>&1";
  std::system(cmd.c_str());
  // The killed writer's file lock can outlive `timeout` by a few milliseconds: retry for up to 2 s.
  std::unique_ptr<H5File> fp;
  for (int i = 0; i < 40 && !fp; ++i) {
    try {
      fp = std::make_unique<H5File>(out + ".partial/training.h5", H5File::Mode::Read);
    } catch (const std::exception&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_TRUE(fp) << "record not readable after the kill";
  EXPECT_FALSE(fs::exists(out)) << "a killed training must not leave a half-made model folder";
  H5File& f = *fp;
  EXPECT_EQ(f.attr("posttrain", "status"), "running");
  auto loss = f.read_f64("posttrain/train/loss");
  EXPECT_GT(loss.size(), 0u);
  EXPECT_EQ(f.read_i64("posttrain/train/step").size(), loss.size());
}

// Ctrl+C (SIGINT) to `run` with two jobs: every job stops at its next step, the file is closed valid
// with each run "finished" or "cancelled", and the CLI exits 130, promptly (the bound here only
// catches a hang; the latency is printed and is about a training step).
TEST(Cli, InterruptCancelsEveryJobAndLeavesAValidFile) {
  const auto spec = tmp("interrupt_spec.json"), out = tmp("interrupt.h5"), log = tmp("interrupt.log");
  fs::remove(out);
  std::ofstream(spec) << R"({"model": "embedded", "data": "embedded", "T": 32, "seed": 0, "baseline": false,
    "posttrain": {"steps": 100000, "batch": 16, "lr": 5e-4},
    "policies": [{"kind": "zero"}, {"kind": "passing"}, {"kind": "tbtt"}],
    "eval": {"length": 256, "sequences": 4, "segment": 128, "batch": 4}})";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1), dup2(fd, 2);
    execl(STATESCOPE_CLI, STATESCOPE_CLI, "run", spec.c_str(), "-o", out.c_str(), "--jobs", "2", (char*)nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(4));  // data loaded, both jobs training
  ASSERT_EQ(kill(pid, SIGINT), 0);
  const auto t0 = std::chrono::steady_clock::now();
  int st = 0;
  double waited = 0;
  while (waitpid(pid, &st, WNOHANG) == 0 && waited < 30) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (waited >= 30) kill(pid, SIGKILL), waitpid(pid, &st, 0);
  std::ifstream lf(log);
  const std::string text((std::istreambuf_iterator<char>(lf)), std::istreambuf_iterator<char>());
  ASSERT_LT(waited, 30) << "run did not stop after SIGINT:\n" << text;
  std::printf("[ info ] run --jobs 2 stopped %.3f s after SIGINT\n", waited);
  ASSERT_TRUE(WIFEXITED(st)) << text;
  EXPECT_EQ(WEXITSTATUS(st), 130) << text;
  EXPECT_NE(text.find("cancelling"), std::string::npos) << text;
  const auto statuses = statescope::test::run_statuses(out);
  EXPECT_EQ(statescope::test::cancelled_runs(statuses), 2) << "both running jobs were cancelled; the third never started";
  H5File f(out, H5File::Mode::Read);
  for (const auto& [run, status] : statuses)
    EXPECT_GT(f.read_f64(run + "/train/loss").size(), 0u) << run << ": the steps done stay in the file";
}

// `unexplored` writes the evaluation and the detector's group; bad knobs are refused by name.
TEST(Cli, UnexploredVerbWritesTheDetectorAndRefusesBadKnobs) {
  const auto out = tmp("unexplored.h5");
  auto r = cli("unexplored --model embedded -o " + out + " --overwrite --length 256 --sequences 4 --train-steps 20");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Spearman with the excess"), std::string::npos) << r.output;
  H5File f(out, H5File::Mode::Read);
  const auto u = read_unexplored(f, "unexplored");
  EXPECT_EQ(u.sequences, 4);
  EXPECT_EQ(u.positions.size(), 16u);  // every T/2 = 16 positions of 256
  EXPECT_TRUE(f.has("unexplored/ppl/nll"));
  EXPECT_EQ(f.attr("unexplored", "status"), "finished");
  auto bad = cli("unexplored --model embedded -o " + tmp("unexplored_bad.h5") + " --overwrite --quantile 1.5");
  EXPECT_EQ(bad.code, 1) << bad.output;
  EXPECT_NE(bad.output.find("quantile"), std::string::npos) << bad.output;
}

// A sweep of more than 50 runs wants --yes, and says so before anything is written.
TEST(Cli, LargeSweepNeedsYes) {
  const auto spec = tmp("big_sweep.json"), out = tmp("big_sweep.h5");
  fs::remove(out);
  std::string seeds;
  for (int i = 0; i < 60; ++i) seeds += (i ? ", " : "") + std::to_string(i);
  std::ofstream(spec) << R"({"model": "embedded", "policies": [{"kind": "passing"}], "sweep": {"seed": [)" + seeds + "]}}";
  auto r = cli("run " + spec + " -o " + out);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("61 runs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--yes"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, DeviceIsCheckedAndRecorded) {
  auto r = cli("--device cuda info --model embedded");
  if (torch::cuda::is_available()) {
    EXPECT_EQ(r.code, 0) << r.output;
  } else {
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("device 'cuda': no CUDA device is visible"), std::string::npos) << r.output;
  }
  auto bad = cli("--precision fp8 info --model embedded");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.output.find("precision 'fp8'"), std::string::npos) << bad.output;
  // bf16 on a CPU without bf16 units runs fp32 and says so (one line, and the record).
  auto none = statescope::test::cli({"--precision", "bf16", "info", "--model", "embedded"}, {"STATESCOPE_BF16_ISA=none"});
  EXPECT_EQ(none.code, 0) << none.out;
  EXPECT_NE(none.out.find("note: bf16 asked, but this CPU has neither AMX nor AVX512-BF16"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("compute: cpu fp32 loop-scan (bf16 asked: this CPU has neither AMX nor AVX512-BF16)"),
            std::string::npos) << none.out;
  auto emulated = statescope::test::cli({"--precision", "bf16", "info", "--model", "embedded"}, {"STATESCOPE_BF16_ISA=emulated"});
  EXPECT_NE(emulated.out.find("compute: cpu bf16 emulated loop-scan"), std::string::npos) << emulated.out;
  EXPECT_EQ(emulated.out.find("note:"), std::string::npos) << emulated.out;
  auto claimed = statescope::test::cli({"--precision", "bf16", "info", "--model", "embedded"}, {"STATESCOPE_BF16_ISA=AMX"});
  EXPECT_EQ(claimed.code, 1) << claimed.out;
  EXPECT_NE(claimed.out.find("STATESCOPE_BF16_ISA 'AMX': expected none or emulated"), std::string::npos) << claimed.out;
  auto scan = cli("--scan triton info --model embedded");
  EXPECT_EQ(scan.code, 1);
  EXPECT_NE(scan.output.find("scan 'triton': expected auto, aten or fused"), std::string::npos) << scan.output;
}

TEST(Cli, InspectComparesTheRunsOfSeveralFiles) {
  auto write_spec = [](const std::string& name, int length) {
    const auto path = tmp(name);
    std::ofstream(path) << R"({"model": "embedded", "policies": [], "eval": {"length": )" << length
                        << R"(, "sequences": 1, "segment": 32, "batch": 1}})";
    return path;
  };
  const auto a = tmp("cmp_a.h5"), b = tmp("cmp_b.h5");
  ASSERT_EQ(cli("run " + write_spec("cmp_a.json", 64) + " -o " + a).code, 0);
  ASSERT_EQ(cli("run " + write_spec("cmp_b.json", 128) + " -o " + b).code, 0);
  // A run that fails (here: weight decay 100 at lr 10 scales every weight by -999 per step, so the loss
  // overflows within 20 steps) is recorded as failed and the exit is non-zero. (A learning rate large
  // enough to overflow at once, like 1e8, is now refused before any run starts: lr is bounded to (0, 10].)
  const auto nan_spec = tmp("nan.json");
  std::ofstream(nan_spec) << R"({"model": "embedded", "baseline": false, "policies": [{"kind": "zero"}],
    "posttrain": {"steps": 20, "batch": 2, "lr": 10, "warmup": 0, "weight_decay": 100},
    "eval": {"length": 64, "sequences": 1, "segment": 32, "batch": 1}})";
  auto failed = cli("run " + nan_spec + " -o " + tmp("nan.h5"));
  EXPECT_NE(failed.code, 0) << failed.output;
  EXPECT_NE(failed.output.find("not every run finished: zero (failed)"), std::string::npos) << failed.output;
  EXPECT_EQ(H5File(tmp("nan.h5"), H5File::Mode::Read).attr("zero", "status"), "failed");
  // -o onto an existing file: refused (exit 1, the file untouched) unless --overwrite.
  const auto before = H5File(a, H5File::Mode::Read).attr("/", "created");
  auto again = cli("run " + write_spec("cmp_a.json", 64) + " -o " + a);
  EXPECT_NE(again.code, 0);
  EXPECT_NE(again.output.find(a + ": already exists"), std::string::npos) << again.output;
  EXPECT_EQ(H5File(a, H5File::Mode::Read).attr("/", "created"), before);
  ASSERT_EQ(cli("run " + write_spec("cmp_a.json", 64) + " -o " + a + " --overwrite --seed 7").code, 0);
  EXPECT_NE(H5File(a, H5File::Mode::Read).attr("/", "spec").find("\"seed\": 7"), std::string::npos);  // --seed replaced it
  auto r = cli("inspect " + a + " " + b);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("statescope_cli_cmp_a/baseline "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("statescope_cli_cmp_b/baseline "), std::string::npos) << r.output;
  // 64 and 128 positions have different position bins: one table each, never misaligned columns.
  size_t tables = 0;
  for (size_t at = r.output.find("norm far/T"); at != std::string::npos; at = r.output.find("norm far/T", at + 1)) ++tables;
  EXPECT_EQ(tables, 2u) << r.output;
  EXPECT_NE(r.output.find("exc 64-128"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("state norm per head, position 64 / position 32: median "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("heads grew more than 5x"), std::string::npos) << r.output;
  auto one = cli("inspect " + a);  // a single file keeps plain run names
  ASSERT_EQ(one.code, 0) << one.output;
  EXPECT_NE(one.output.find("\nbaseline "), std::string::npos) << one.output;
  // Foreign, newer and empty files are named and make the exit non-zero (they used to list nothing,
  // or a foreign file's groups as runs, and exit 0).
  {
    H5File foreign(tmp("foreign.h5"), H5File::Mode::Create);
    foreign.set_attr("g", "status", "finished");
    foreign.set_attr("/", "format", "someone-else");
  }
  {
    H5File future(tmp("future.h5"), H5File::Mode::Create);
    future.set_attr("/", "format", "statescope-experiment");
    future.set_attr("/", "format_version", "999");
  }
  ExperimentFile::create(tmp("empty.h5"));
  for (auto [file, why] : {std::pair<std::string, std::string>{"foreign.h5", "not a statescope experiment file"},
                           {"future.h5", "written by a newer statescope (format_version 999"},
                           {"empty.h5", "holds no runs"}}) {
    auto r2 = cli("inspect " + tmp(file));
    EXPECT_NE(r2.code, 0) << file;
    EXPECT_NE(r2.output.find(tmp(file) + ": " + why), std::string::npos) << r2.output;
  }
  auto bad = cli("inspect " + a + " /no/such/file.h5");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.output.find("/no/such/file.h5"), std::string::npos) << bad.output;
}

// copying --seeds: one run per policy and seed, each with zero- and passed-state scores, and a
// table of means and ranges over the seeds.
TEST(Cli, CopyingRunsEveryPolicyAndSeed) {
  const auto out = tmp("copy_seeds.h5");
  auto r = cli("copying -o " + out + " --overwrite --policies zero,tbtt --seeds 1,2 --L 2 --alphabet 3 --steps 3 "
               "--batch 4 --samples 2 --examples 40 --d-model 16 --d-state 8 --headdim 8");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("mean [min-max] over 2 seeds"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tbtt: zero | passed"), std::string::npos) << r.output;
  H5File f(out, H5File::Mode::Read);
  for (const char* run : {"copying_zero_s1", "copying_zero_s2", "copying_tbtt_s1", "copying_tbtt_s2"}) {
    EXPECT_EQ(f.attr(run, "status"), "finished") << run;
    EXPECT_TRUE(f.has(std::string(run) + "/copying/exact_passed")) << run;
  }
}

// A task study in a spec (posttrain.steps 0, task fine-tuning per policy run) gives the same numbers
// as the CLI verb with the same seed and knobs, and its baseline run is the model as loaded.
TEST(Cli, TaskStudySpecMatchesTheVerbs) {
  const fs::path dir = tmp("task_model");
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 1; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(2);
  save_model_dir(m, dir.string());
  ModelRecord rec;
  rec.T = 16;
  write_model_record(dir.string(), rec);
  const std::string spec_path = tmp("task_spec.json"), out = tmp("task_spec.h5");
  std::ofstream(spec_path) << R"({"model": ")" + dir.string() + R"(", "seed": 4, "baseline": true,
    "posttrain": {"steps": 0}, "policies": [{"kind": "tbtt"}],
    "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2},
    "analyses": {"passkey": {"lengths": [130, 200], "depths": [0, 1], "samples": 2,
                             "finetune": {"steps": 2, "T": 130, "batch": 2, "lr": 2e-3, "examples": 20}},
                 "babi": {"lengths": [200, 300], "samples": 3, "facts": 2,
                          "finetune": {"steps": 2, "T": 150, "batch": 2, "examples": 20}}}})";
  auto r = cli("run " + spec_path + " -o " + out + " --overwrite");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("tbtt (tasks only)"), std::string::npos) << r.output;
  const std::string common = "--model " + dir.string() + " --seed 4 --overwrite ";
  const std::string pk = tmp("task_pk.h5"), pk0 = tmp("task_pk0.h5"), bb = tmp("task_babi.h5");
  auto a = cli("passkey " + common + "--lengths 130,200 --depths 0,1 --samples 2 --finetune-steps 2 --T 130 --batch 2 "
               "--lr 2e-3 --policy tbtt --examples 20 -o " + pk);
  ASSERT_EQ(a.code, 0) << a.output;
  auto a0 = cli("passkey " + common + "--lengths 130,200 --depths 0,1 --samples 2 -o " + pk0);
  ASSERT_EQ(a0.code, 0) << a0.output;
  auto b = cli("babi " + common + "--lengths 200,300 --samples 3 --facts 2 --finetune-steps 2 --T 150 --batch 2 "
               "--policy tbtt --examples 20 -o " + bb);
  ASSERT_EQ(b.code, 0) << b.output;
  H5File f(out, H5File::Mode::Read);
  EXPECT_FALSE(f.has("baseline/passkey/train")) << "the baseline run is measured as loaded";
  EXPECT_EQ(f.attr("tbtt", "intervention"), "tbtt (tasks only)");
  auto same = [&](const std::string& file, const std::string& a_name, const std::string& b_name) {
    auto x = read(file, a_name), y = read(out, b_name);
    ASSERT_EQ(x.sizes(), y.sizes()) << b_name;
    EXPECT_TRUE(torch::equal(x, y)) << b_name << ": verb " << x << " spec " << y;
  };
  // One driver (issue 51): the verb's run is laid out as the spec's run (fine-tuning under the
  // analysis's group, not the run's), and says what its model is.
  same(pk, "/passkey/passkey/train/loss", "/tbtt/passkey/train/loss");
  EXPECT_EQ(H5File(pk, H5File::Mode::Read).attr("passkey", "architecture"), f.attr("tbtt", "architecture"));
  same(pk, "/passkey/passkey/digit_accuracy", "/tbtt/passkey/digit_accuracy");
  same(pk0, "/passkey/passkey/digit_accuracy", "/baseline/passkey/digit_accuracy");
  same(bb, "/babi/babi/train/loss", "/tbtt/babi/train/loss");
  same(bb, "/babi/babi/choice_accuracy", "/tbtt/babi/choice_accuracy");
  // No language-model post-training: the policy run's evaluation is the untouched model's.
  EXPECT_TRUE(torch::equal(read(out, "/baseline/ppl/nll"), read(out, "/tbtt/ppl/nll")));
  fs::remove_all(dir);
}

TEST(Cli, DataVerbListsAndClearsTheTokenCache) {
  const auto cache = tmp("cache_admin"), text = tmp("cache_admin_src");
  fs::remove_all(cache);
  fs::create_directories(text);
  for (const char* f : {"a.txt", "b.txt"}) std::ofstream(text + "/" + f) << "a document called " << f << "\n";
  ASSERT_EQ(cli("data --data " + text + " --cache " + cache).code, 0);
  auto list = cli("data --list-cache --cache " + cache);
  ASSERT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find(": 1 entries"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("current"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find(fs::absolute(text).string()), std::string::npos) << list.output;
  EXPECT_EQ(cli("data --clear-cache --clear-stale --cache " + cache).code, 2);  // usage error: one or the other
  fs::remove_all(text);
  auto stale = cli("data --clear-stale --cache " + cache);
  ASSERT_EQ(stale.code, 0) << stale.output;
  EXPECT_NE(stale.output.find("source gone"), std::string::npos) << stale.output;
  EXPECT_NE(cli("data --list-cache --cache " + cache).output.find(": 0 entries"), std::string::npos);
}

TEST(Cli, DataVerbPreparesJsonLinesThroughTheCache) {
  const fs::path dir = tmp("data_verb");
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "c.jsonl");
    for (int i = 0; i < 20; ++i) f << "{\"text\": \"document number " << i << "\"}\n";
  }
  const std::string args = "data --data " + (dir / "c.jsonl").string() + " --cache " + (dir / "cache").string() +
                           " --tokenizer " + kGolden + "tokenizer";
  auto r = cli(args);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("tokenizer bpe"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("train: 18 documents"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("validation: 2 documents"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("prepared in"), std::string::npos) << r.output;
  auto again = cli(args);
  EXPECT_NE(again.output.find("(reused)"), std::string::npos) << again.output;
  auto missing = cli("data --data " + (dir / "nope.jsonl").string() + " --cache " + (dir / "cache").string());
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("nope.jsonl (data): no such file"), std::string::npos) << missing.output;
  fs::remove_all(dir);
}

TEST(Cli, PasskeyAndBabiRunInBpeTokens) {
  // A model directory with a tokenizer.json: a tiny model over the BPE fixture's 4003 ids.
  const fs::path dir = tmp("bpe_model");
  test::write_tiny_bpe_model(dir.string(), 2, 5);
  const std::string out = tmp("bpe_passkey.h5");
  fs::remove(out);
  auto r = cli("passkey --model " + dir.string() + " --lengths 100,150 --depths 0,1 --samples 2 --finetune-steps 2 "
               "--batch 2 --T 100 -o " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("passkey accuracy"), std::string::npos) << r.output;
  EXPECT_EQ(read(out, "/passkey/passkey/accuracy").numel(), 4);
  auto bad = cli("passkey --model " + dir.string() + " --lengths 10 -o " + tmp("bpe_short.h5"));
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.output.find("passkey: length 10 is shorter than the fixed text"), std::string::npos) << bad.output;
  const std::string bout = tmp("bpe_babi.h5");
  fs::remove(bout);
  auto b = cli("babi --model " + dir.string() + " --lengths 100,200 --samples 3 --facts 2 --finetune-steps 2 --batch 2 --policy tbtt "
               "--T 100 -o " + bout);
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_NE(b.output.find("bAbI single supporting fact"), std::string::npos) << b.output;
  EXPECT_EQ(read(bout, "/babi/babi/choice_accuracy").numel(), 2);
  fs::remove_all(dir);
}

// Files that crash libhdf5 1.10.8 itself (found by fuzzing: an out-of-bounds memcpy in H5Dread of a
// contiguous dataset, and in the global-heap read of a variable-length string attribute). The
// child-process pre-read dies instead of statescope, and the file is refused by name. Run through
// the CLI: a fresh process has the same heap layout each time, so the library crashes every time
// (inside a long test process, where it lands depends on what ran before).
TEST(Cli, AFileThatCrashesTheHdf5LibraryIsRefusedByName) {
  const std::string dir = std::string(STATESCOPE_SOURCE_DIR) + "/tests/fuzz/regressions/fuzz_experiment_file/";
  for (const char* name : {"hdf5-dataset-read-memcpy-segv.h5", "hdf5-vlen-attribute-memcpy-segv.h5"}) {
    auto r = cli("inspect " + dir + name);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find(std::string(name) + ": damaged: reading it crashed the HDF5 library in a separate process"),
              std::string::npos) << r.output;
  }
}


// A spec's "pretrain" section: every cell of its sweep trains its own model from scratch and runs
// its baseline and policies on it; the pretraining runs are in the file with their training curves,
// the runs of a cell name the model they used, and each kept model is exactly what the
// `statescope-cli pretrain` command it records makes (same weights, bit for bit).
TEST(Cli, PretrainSweepModelsAreWhatTheirRecordedCommandMakes) {
  const auto spec = tmp("pretrain_sweep.json"), out = tmp("pretrain_sweep.h5"), keep = tmp("pretrain_models"),
             again = tmp("pretrain_again");
  fs::remove_all(keep);
  fs::remove_all(again);
  std::ofstream(spec) << R"({"pretrain": {"d_model": 16, "n_layer": 1, "d_state": 4, "headdim": 8, "steps": 3,
      "batch": 2, "lr": 2e-3, "warmup": 1, "dt_max": 0.05}, "T": 8, "save_models": ")" + keep + R"(",
    "posttrain": {"steps": 2, "batch": 2}, "policies": [{"kind": "passing"}],
    "eval": {"length": 32, "sequences": 2, "segment": 16, "batch": 2},
    "sweep": {"pretrain.d_state": [4, 8], "seed": [1, 2]}})";
  auto r = cli("run " + spec + " -o " + out + " --overwrite --jobs 2");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("norm far/T"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("baseline@pretrain.d_state=8"), std::string::npos) << r.output;  // the sweep table's groups
  H5File f(out, H5File::Mode::Read);
  const std::string pre = "pretrain@pretrain.d_state=8,seed=2";
  EXPECT_EQ(f.attr(pre, "status"), "finished");
  EXPECT_EQ(f.read_f64(pre + "/train/loss").size(), 3u);
  for (const char* run : {"baseline@pretrain.d_state=8,seed=2", "passing@pretrain.d_state=8,seed=2"}) {
    EXPECT_EQ(f.attr(run, "status"), "finished") << run;
    EXPECT_EQ(f.attr(run, "model"), (fs::path(keep) / pre).string()) << run;
  }
  const std::string dir = (fs::path(keep) / pre).string();
  EXPECT_EQ(std::get<Mamba2Config>(load_model_config(dir + "/config.json")).d_state, 8);
  // The recorded command, pointed at another folder, makes the same weights.
  std::ostringstream text;
  text << std::ifstream(dir + "/statescope.json").rdbuf();
  const auto record = nlohmann::json::parse(text.str());
  std::string command = record.at("command").get<std::string>();
  ASSERT_EQ(command.rfind("statescope-cli pretrain --out " + dir + " ", 0), 0u) << command;
  command = "pretrain --out " + again + command.substr(std::string("statescope-cli pretrain --out " + dir).size());
  auto p = cli(command);
  ASSERT_EQ(p.code, 0) << command << "\n" << p.output;
  expect_same_weights(dir, again);
  // Bad pretrain sections are refused by field before anything runs.
  for (const auto& [bad, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"pretrain": {"d_stat": 4}, "T": 8})", "pretrain.d_stat"},
           {R"({"pretrain": {}, "model": "embedded", "T": 8})", "'pretrain'"},
           {R"({"pretrain": {}})", "'T'"},
           {R"({"pretrain": {"arch": "mamba1", "headdim": 8}, "T": 8})", "pretrain.headdim"},
           {R"({"pretrain": {"dt_min": 0.5, "dt_max": 0.1}, "T": 8})", "pretrain.dt_min"},
           {R"({"pretrain": {"headdim": 48}, "T": 8})", "headdim"},
           {R"({"T": 8, "sweep": {"pretrain.d_state": [4]}})", "no 'pretrain' section"},
           {R"({"pretrain": {}, "T": 8, "sweep": {"pretrain.d_state": [0]}})", "sweep.pretrain.d_state"},
           {R"({"pretrain": {"d_model": 16}, "T": 8, "sweep": {"pretrain.d_model": [16, 24], "pretrain.headdim": [8, 12]}})",
            "sweep cell pretrain.d_model=16,pretrain.headdim=12"}}) {
    std::ofstream(spec) << bad;
    auto e = cli("run " + spec + " -o " + tmp("never.h5") + " --overwrite");
    EXPECT_EQ(e.code, 1) << bad << "\n" << e.output;
    EXPECT_NE(e.output.find(field), std::string::npos) << bad << "\n" << e.output;
  }
}

// Issue 53 at the committed tiny scale: a byte-level hybrid of each family pretrained by a spec (its
// layer pattern from "layers"), post-trained under state passing (attention starting empty), and
// evaluated beside the two ablations (reset every T: the recurrent layers alone; attention_window T),
// every run finished on the one yardstick; the ablations change the losses; the command the model
// records makes the same weights.
// A run reproduced alone from the file it is in (run --from FILE --only NAME): the same numbers as in
// the whole experiment (its seeds and yardstick are the plan's), nothing else run; a name that is no
// run of the plan is refused, listing the runs; the file read is an input -o may not replace.
TEST(Cli, ARunIsReproducedAloneFromItsFile) {
  const auto spec = tmp("only_spec.json"), whole = tmp("only_whole.h5"), one = tmp("only_one.h5");
  std::ofstream(spec) << R"({"model": "embedded", "posttrain": {"steps": 3, "batch": 2}, "policies": [{"kind": "zero"},
      {"kind": "passing"}], "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2}, "sweep": {"seed": [0, 1]}})";
  auto r = cli("--threads 1 run " + spec + " -o " + whole + " --overwrite --jobs 1");
  ASSERT_EQ(r.code, 0) << r.output;
  r = cli("--threads 1 run --from " + whole + " --only 'passing@seed=1' -o " + one + " --overwrite");
  ASSERT_EQ(r.code, 0) << r.output;
  H5File a(whole, H5File::Mode::Read), b(one, H5File::Mode::Read);
  EXPECT_EQ(run_names(b), (std::vector<std::string>{"passing@seed=1"}));
  EXPECT_EQ(b.read_f32("passing@seed=1/ppl/nll_per_sequence"), a.read_f32("passing@seed=1/ppl/nll_per_sequence"));
  EXPECT_EQ(b.read_f64("passing@seed=1/ppl/fixed_excess"), a.read_f64("passing@seed=1/ppl/fixed_excess"));
  r = cli("run --from " + whole + " --only nothing -o " + tmp("only_never.h5"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("'nothing' is no run of this experiment (--only); its runs: baseline, zero@seed=0, zero@seed=1, passing@seed=0, passing@seed=1"), std::string::npos)
      << r.output;
  r = cli("run --from " + whole + " --only 'zero@seed=0' -o " + whole + " --overwrite");
  EXPECT_EQ(r.code, 1) << "the file read may not be replaced";
  EXPECT_EQ(run_names(H5File(whole, H5File::Mode::Read)).size(), 5u) << "and it is as it was";
}

TEST(Cli, HybridsPretrainPostTrainAndAblateFromASpec) {
  const std::vector<std::pair<std::string, std::string>> families{
      {"nemotron_h", R"("layers": "M*-M", "n_layer": 4, "headdim": 8, "d_state": 8, "chunk_size": 8)"},
      {"qwen3_5", R"("layers": "G*G", "n_layer": 3, "num_heads": 2, "head_dim": 8)"},
      {"granite_h", R"("layers": "M*M", "n_layer": 3, "headdim": 8, "d_state": 8, "chunk_size": 8)"}};
  for (const auto& [arch, shape] : families) {
    const auto spec = tmp("hybrid_" + arch + ".json"), out = tmp("hybrid_" + arch + ".h5"), keep = tmp("hybrid_" + arch + "_models"),
               again = tmp("hybrid_" + arch + "_again");
    fs::remove_all(keep);
    fs::remove_all(again);
    std::ofstream(spec) << R"({"pretrain": {"arch": ")" + arch + R"(", "d_model": 16, )" + shape +
                               R"(, "attention_heads": 2, "kv_heads": 1, "attention_head_dim": 8, "mlp_size": 32, "steps": 3,
        "batch": 2}, "T": 8, "save_models": ")" + keep + R"(", "posttrain": {"steps": 2, "batch": 2, "lr": 1e-3},
      "policies": [{"kind": "passing"}],
      "interventions": [{"kind": "reset", "period": 8}, {"kind": "attention_window", "period": 8}],
      "eval": {"length": 48, "sequences": 2, "segment": 16, "batch": 2}})";
    auto r = cli("run " + spec + " -o " + out + " --overwrite");
    ASSERT_EQ(r.code, 0) << arch << "\n" << r.output;
    H5File f(out, H5File::Mode::Read);
    for (const char* run : {"baseline", "passing", "reset", "attention_window"})
      EXPECT_EQ(f.attr(run, "status"), "finished") << arch << " " << run;
    EXPECT_EQ(f.attr("attention_window/intervention", "attention_window"), "8") << arch;
    const auto base = f.read_f32("baseline/ppl/nll_per_sequence");
    EXPECT_NE(f.read_f32("reset/ppl/nll_per_sequence"), base) << arch << ": resetting the recurrent layers matters";
    EXPECT_NE(f.read_f32("attention_window/ppl/nll_per_sequence"), base) << arch << ": the window matters";
    // What the attention layer (model layer 1) reads, per run: under a window of 8 a position past 10
    // reads none of the first 4 tokens; in full, every position reads them.
    std::vector<int64_t> d;
    const auto windowed = f.read_f64("attention_window/attention_stats/first_mass", &d);
    ASSERT_EQ(d, (std::vector<int64_t>{1, 2, 48})) << arch;
    for (int64_t row = 0; row < 2; ++row)
      for (int64_t p = 11; p < 48; ++p) EXPECT_EQ(windowed[row * 48 + p], 0.0) << arch << " position " << p;
    const auto full = f.read_f64("baseline/attention_stats/first_mass");
    EXPECT_GT(full[47], 0.0) << arch;
    EXPECT_EQ(f.read_i64("baseline/attention_stats/layer"), (std::vector<int64_t>{1})) << arch;
    auto ins = cli("inspect " + out);
    EXPECT_NE(ins.output.find("attention L1, position 8 -> 48: entropy"), std::string::npos) << ins.output;
    const std::string dir = (fs::path(keep) / "pretrain").string();
    EXPECT_EQ(architecture(load_model_config(dir + "/config.json")), arch);
    std::ostringstream text;
    text << std::ifstream(dir + "/statescope.json").rdbuf();
    std::string command = nlohmann::json::parse(text.str()).at("command").get<std::string>();
    EXPECT_NE(command.find("--layers "), std::string::npos) << command;
    command = "pretrain --out " + again + command.substr(std::string("statescope-cli pretrain --out " + dir).size());
    auto p = cli(command);  // through the shell, as a user pastes it
    ASSERT_EQ(p.code, 0) << command << "\n" << p.output;
    expect_same_weights(dir, again);
  }
  auto e = cli("pretrain --arch nemotron_h --n-layer 2 --layers 'M*E' --steps 1 --out " + tmp("never_hybrid"));
  EXPECT_EQ(e.code, 1) << e.output;
  e = cli("pretrain --arch mamba2 --layers M* --steps 1 --out " + tmp("never_m2"));
  EXPECT_EQ(e.code, 1) << e.output;
  EXPECT_NE(e.output.find("--layers is a hybrid option; --arch mamba2 has no such setting"), std::string::npos) << e.output;
}

// One pretrain builder for the CLI and a spec (pretrain_model): a Gated DeltaNet pretrained by a
// spec's pretrain section (which refused gated_deltanet before) is exactly what the command it records
// makes; a flag of another architecture is refused by name through the same ownership table.
TEST(Cli, PretrainOfEveryArchitectureGoesThroughTheOneBuilder) {
  const auto spec = tmp("pretrain_gdn.json"), out = tmp("pretrain_gdn.h5"), keep = tmp("pretrain_gdn_models"),
             again = tmp("pretrain_gdn_again");
  fs::remove_all(keep);
  fs::remove_all(again);
  std::ofstream(spec) << R"({"pretrain": {"arch": "gated_deltanet", "d_model": 16, "n_layer": 1, "num_heads": 2,
      "head_dim": 8, "expand_v": 1, "steps": 2, "batch": 2, "a_min": 2, "a_max": 4}, "T": 8, "save_models": ")" + keep + R"(",
    "policies": [], "eval": {"length": 32, "sequences": 2, "segment": 16, "batch": 2}})";
  auto r = cli("run " + spec + " -o " + out + " --overwrite");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string dir = (fs::path(keep) / "pretrain").string();
  const auto cfg = std::get<GatedDeltaNetConfig>(load_model_config(dir + "/config.json"));
  EXPECT_EQ(cfg.head_dim, 8);
  EXPECT_EQ(cfg.num_heads, 2);
  std::ostringstream text;
  text << std::ifstream(dir + "/statescope.json").rdbuf();
  std::string command = nlohmann::json::parse(text.str()).at("command").get<std::string>();
  ASSERT_EQ(command.rfind("statescope-cli pretrain --out " + dir + " ", 0), 0u) << command;
  EXPECT_NE(command.find("--arch gated_deltanet"), std::string::npos) << command;
  command = "pretrain --out " + again + command.substr(std::string("statescope-cli pretrain --out " + dir).size());
  auto p = cli(command);
  ASSERT_EQ(p.code, 0) << command << "\n" << p.output;
  expect_same_weights(dir, again);
  auto e = cli("pretrain --arch gla --head-dim 8 --steps 1 --out " + tmp("never_gla"));
  EXPECT_EQ(e.code, 1) << e.output;
  EXPECT_NE(e.output.find("--head-dim is a Gated DeltaNet option; --arch gla has no such setting"), std::string::npos) << e.output;
  std::ofstream(spec) << R"({"pretrain": {"arch": "gla", "head_dim": 8}, "T": 8})";
  e = cli("run " + spec + " -o " + tmp("never.h5") + " --overwrite");
  EXPECT_EQ(e.code, 1) << e.output;
  EXPECT_NE(e.output.find("field 'pretrain.head_dim' is a Gated DeltaNet setting"), std::string::npos) << e.output;
}
