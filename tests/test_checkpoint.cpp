// test_checkpoint.cpp — save/load round trip and every bad-input path of a model directory.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "core/model/checkpoint.h"
#include "core/base/error.h"
#include "core/model/safetensors.h"
#include "tests/test_util.h"

using namespace statescope;
using statescope::test::m2cfg;
namespace fs = std::filesystem;

namespace {

const std::string kGolden = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/";

fs::path fresh_dir(const std::string& name) {
  auto d = fs::temp_directory_path() / ("statescope_test_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void copy_dir(const fs::path& from, const fs::path& to) {
  for (auto& e : fs::directory_iterator(from)) fs::copy_file(e.path(), to / e.path().filename());
}

// Loads `dir` expecting an Error mentioning every fragment.
void expect_load_error(const fs::path& dir, std::initializer_list<std::string> fragments) {
  try {
    load_model_dir(dir.string(), default_compute());
    FAIL() << "no error for " << dir;
  } catch (const Error& e) {
    const std::string m = e.what();
    for (auto& f : fragments) EXPECT_NE(m.find(f), std::string::npos) << "missing '" << f << "' in: " << m;
  }
}

// Rewrites model.safetensors in `dir` through `edit`, which may drop, reshape or add tensors.
void rewrite_weights(const fs::path& dir, const std::function<void(StateDict&)>& edit) {
  auto sd = read_weights_file((dir / "model.safetensors").string());
  edit(sd);
  std::vector<TensorToWrite> ts;
  std::vector<torch::Tensor> keep;
  for (auto& [k, v] : sd) {
    auto c = v.contiguous().to(torch::kFloat32);
    keep.push_back(c);
    ts.push_back({k, DType::F32, c.sizes().vec(), c.data_ptr()});
  }
  write_safetensors((dir / "model.safetensors").string(), ts, {});
}

// Replaces the first `from` in text file `path` by `to`; false when `from` is not there.
bool replace_in_file(const fs::path& path, const std::string& from, const std::string& to) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const auto at = text.find(from);
  if (at == std::string::npos) return false;
  text.replace(at, from.size(), to);
  std::ofstream(path) << text;
  return true;
}

}  // namespace

TEST(Checkpoint, SaveLoadRoundTripIsExact) {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 2; c.d_state = 8; c.headdim = 8; c.ngroups = 2; c.vocab_size = 48;
  c.tie_embeddings = false; c.dt_limit_hi = 0.05;
  RecurrentLM m = Mamba2LM(c);
  m->reset_parameters(3);
  auto d = fresh_dir("roundtrip");
  save_model_dir(m, d.string());
  auto back = load_model_dir(d.string(), default_compute());
  EXPECT_EQ(m2cfg(back).ngroups, 2);
  EXPECT_DOUBLE_EQ(m2cfg(back).dt_limit_hi, 0.05);
  auto tokens = torch::randint(0, c.vocab_size, {2, 19}, torch::kInt64);
  torch::NoGradGuard ng;
  m->fused_scan = back->fused_scan;  // forward() runs the model's scan: the same one on both sides
  EXPECT_TRUE(torch::equal(m->forward(tokens).logits, back->forward(tokens).logits));
}

TEST(Checkpoint, MissingFilesAndDirectories) {
  expect_load_error("/nonexistent/model", {"/nonexistent/model", "not a directory"});
  auto d = fresh_dir("nocfg");
  expect_load_error(d, {"config.json", "not found"});
  std::ofstream(d / "config.json") << R"({"model_type": "mamba2", "hidden_size": 32, "num_hidden_layers": 2,
      "vocab_size": 64, "head_dim": 8, "state_size": 8, "n_groups": 1})";
  expect_load_error(d, {"no weights found"});
}

TEST(Checkpoint, ConfigWithoutRequiredField) {
  auto d = fresh_dir("badcfg");
  copy_dir(kGolden + "hf-untied", d);
  std::ofstream(d / "config.json") << R"({"model_type": "mamba2", "hidden_size": 32, "vocab_size": 64})";
  expect_load_error(d, {"config.json", "num_hidden_layers", "missing"});
}

TEST(Checkpoint, TruncatedWeights) {
  auto d = fresh_dir("trunc");
  copy_dir(kGolden + "hf-untied", d);
  fs::resize_file(d / "model.safetensors", fs::file_size(d / "model.safetensors") - 100);
  expect_load_error(d, {"model.safetensors", "outside the data buffer"});
  fs::resize_file(d / "model.safetensors", 5);
  expect_load_error(d, {"model.safetensors", "truncated"});
}

TEST(Checkpoint, MissingTensor) {
  auto d = fresh_dir("missing");
  copy_dir(kGolden + "hf-untied", d);
  rewrite_weights(d, [](StateDict& sd) { sd.erase("backbone.layers.1.mixer.A_log"); });
  expect_load_error(d, {"model.safetensors", "backbone.layers.1.mixer.A_log", "missing"});
}

TEST(Checkpoint, NonFiniteWeightsAreRefusedNamingTheTensor) {
  auto d = fresh_dir("nonfinite");
  copy_dir(kGolden + "hf-untied", d);
  rewrite_weights(d, [](StateDict& sd) {
    auto& w = sd.at("backbone.layers.0.mixer.in_proj.weight");
    w = w.clone();
    w.view({-1})[5] = std::numeric_limits<float>::quiet_NaN();
    w.view({-1})[9] = std::numeric_limits<float>::infinity();
  });
  expect_load_error(d, {"model.safetensors", "backbone.layers.0.mixer.in_proj.weight", "2 non-finite values",
                        "flat index 5"});
  // A finite file loads (the check itself refuses nothing sound).
  auto ok = fresh_dir("finite");
  copy_dir(kGolden + "hf-untied", ok);
  EXPECT_NO_THROW(load_model_dir(ok.string(), default_compute()));
}

TEST(Checkpoint, MisshapenTensor) {
  auto d = fresh_dir("misshapen");
  copy_dir(kGolden + "hf-untied", d);
  rewrite_weights(d, [](StateDict& sd) {
    sd["backbone.layers.0.mixer.conv1d.weight"] = torch::zeros({80, 1, 3});
  });
  expect_load_error(d, {"backbone.layers.0.mixer.conv1d.weight", "[80, 1, 3]", "expected [80, 1, 4]"});
}

TEST(Checkpoint, UnexpectedTensor) {
  auto d = fresh_dir("extra");
  copy_dir(kGolden + "hf-untied", d);
  rewrite_weights(d, [](StateDict& sd) { sd["backbone.layers.0.attn.q_proj.weight"] = torch::zeros({2}); });
  expect_load_error(d, {"unexpected tensor", "attn.q_proj"});
}

TEST(Checkpoint, UnknownDtype) {
  auto d = fresh_dir("dtype");
  copy_dir(kGolden + "hf-untied", d);
  // Flip the first tensor's dtype string in the header to one that does not exist.
  std::fstream f(d / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
  std::string head(512, '\0');
  f.read(head.data(), 512);
  const auto pos = head.find("\"F32\"");
  ASSERT_NE(pos, std::string::npos);
  f.seekp(static_cast<std::streamoff>(pos));
  f.write("\"X32\"", 5);
  f.close();
  expect_load_error(d, {"model.safetensors", "unsupported dtype \"X32\""});
}

TEST(Checkpoint, TiedHeadMustEqualEmbedding) {
  auto sd = read_weights_file(kGolden + "ssm-tied/pytorch_model.bin");
  ASSERT_TRUE(sd.count("backbone.embedding.weight"));
  ASSERT_TRUE(sd.count("lm_head.weight"));
  auto model = load_model_dir(kGolden + "ssm-tied", default_compute());
  EXPECT_EQ(m2cfg(model).vocab_size, 64);  // 60 padded to a multiple of 16
  sd["lm_head.weight"] = sd["lm_head.weight"] + 1;
  try {
    load_state_dict(*model, sd, "pytorch_model.bin");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("differs from the embedding"), std::string::npos) << e.what();
  }
}

TEST(Checkpoint, AConfigBiggerThanItsWeightsIsRefusedBeforeAllocating) {
  // 900 layers is within the limits, but the 75 KB of weights beside it cannot hold 900 layers: the
  // loader says so instead of allocating the model first.
  auto d = fresh_dir("bigconfig");
  copy_dir(kGolden + "hf-tied", d);
  ASSERT_TRUE(replace_in_file(d / "config.json", "\"num_hidden_layers\": 2", "\"num_hidden_layers\": 900"));
  expect_load_error(d, {"config.json: describes", "parameters", "but the weights files in", "hold"});
}

TEST(Checkpoint, ShardIndexCannotPointOutsideTheModelFolder) {
  for (const char* bad : {"../model-00001-of-00003.safetensors", "/etc/passwd", ".."}) {
    auto d = fresh_dir("escape");
    copy_dir(kGolden + "wild/hf5-sharded", d);
    ASSERT_TRUE(replace_in_file(d / "model.safetensors.index.json", "model-00001-of-00003.safetensors", bad));
    expect_load_error(d, {"model.safetensors.index.json", bad, "is not a file name in the model folder"});
  }
}

TEST(Checkpoint, NotATorchZip) {
  auto d = fresh_dir("badbin");
  fs::copy_file(kGolden + "ssm-tied/config.json", d / "config.json");
  std::ofstream(d / "pytorch_model.bin") << "this is not a zip archive";
  expect_load_error(d, {"pytorch_model.bin", "not a torch.save zip"});
}
