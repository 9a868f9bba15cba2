// test_hub_cache.cpp — model ids resolved in a Hugging Face cache that huggingface_hub itself wrote
// (tests/golden/make_hf_cache.py): refs, tags, commit hashes, the listing, and every way it can fail.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include "core/base/error.h"
#include "core/base/hub_cache.h"
#include "core/data/tokenizer.h"
#include "core/model/cached_models.h"
#include "core/model/model_config.h"
#include "core/model/model_registry.h"
#include "tests/error_text.h"
#include "tests/scratch.h"

using namespace statescope;
using statescope::test::error_of;
namespace fs = std::filesystem;

namespace {

const std::string kGolden = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/";
const std::string kCache = kGolden + "hf-cache/hub";
const std::string kMain = "bbbbbbbb22222222222222222222222222222222";
const std::string kV1 = "aaaaaaaa11111111111111111111111111111111";

// Sets the cache variables for one test and restores them after.
class HubCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) {
      const char* old = std::getenv(v);
      saved_.emplace_back(v, old ? std::optional<std::string>(old) : std::nullopt);
      ::unsetenv(v);
    }
    ::setenv("HF_HUB_CACHE", kCache.c_str(), 1);
  }
  void TearDown() override {
    for (const auto& [v, old] : saved_) old ? (void)::setenv(v, old->c_str(), 1) : (void)::unsetenv(v);
  }
  static constexpr const char* kVars[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

}  // namespace

TEST(HubId, TheHubsRulesForRepositoryIds) {
  for (const char* ok : {"state-spaces/mamba2-130m", "a/b", "owner/name@main", "o/n@v1.0", "o/n@refs/pr/1",
                         "o/n@0123456789abcdef0123456789abcdef01234567", "EleutherAI/gpt-neox-20b", "o_1/n.x"})
    EXPECT_TRUE(is_hub_id(ok)) << ok;
  for (const char* bad : {"", "mamba2", "/abs/path", "a/b/c", "./model", "../x/y", "o--x/n", "o/n..x", "-o/n", "o/n-",
                          "o/n@", "o/n@../../etc", "o/n@a b", "o /n", "o/n\\x", "embedded"})
    EXPECT_FALSE(is_hub_id(bad)) << bad;
}

TEST_F(HubCacheTest, WhereTheCacheIsFollowsHuggingFaceHub) {
  EXPECT_EQ(hub_cache().dir, kCache);
  EXPECT_EQ(hub_cache().source, "$HF_HUB_CACHE");
  ::unsetenv("HF_HUB_CACHE");
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(hub_cache().dir, "/home/u/.cache/huggingface/hub");
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(hub_cache().dir, "/xdg/huggingface/hub");
  ::setenv("HF_HOME", "~/hf", 1);  // "~" expanded as huggingface_hub does
  EXPECT_EQ(hub_cache().dir, "/home/u/hf/hub");
  EXPECT_EQ(hub_cache().source, "$HF_HOME/hub");
  ::setenv("HUGGINGFACE_HUB_CACHE", "/legacy", 1);
  EXPECT_EQ(hub_cache().dir, "/legacy");
  ::setenv("HF_HUB_CACHE", "/new", 1);
  EXPECT_EQ(hub_cache().dir, "/new");
}

TEST_F(HubCacheTest, AnIdResolvesThroughRefsToItsSnapshot) {
  const std::string main_dir = kCache + "/models--statescope-test--tiny-mamba2/snapshots/" + kMain;
  const std::string v1_dir = kCache + "/models--statescope-test--tiny-mamba2/snapshots/" + kV1;
  EXPECT_EQ(resolve_model("statescope-test/tiny-mamba2"), main_dir);
  EXPECT_EQ(resolve_model("statescope-test/tiny-mamba2@main"), main_dir);
  EXPECT_EQ(resolve_model("statescope-test/tiny-mamba2@v1"), v1_dir);   // a tag
  EXPECT_EQ(resolve_model("statescope-test/tiny-mamba2@" + kV1), v1_dir);  // a commit hash
  EXPECT_EQ(resolve_model("statescope-test/tiny-mamba2@aaaaaaaa1"), v1_dir);  // a unique prefix
  const auto s = hub_model_snapshot("statescope-test/tiny-mamba2@v1");
  EXPECT_EQ(s.id, "statescope-test/tiny-mamba2");
  EXPECT_EQ(s.revision, "v1");
  EXPECT_EQ(s.commit, kV1);
  // The snapshot's files are huggingface_hub's symlinks into blobs/; what they hold is the model that
  // was uploaded, byte for byte.
  EXPECT_TRUE(fs::is_symlink(fs::path(main_dir) / "model.safetensors"));
  EXPECT_EQ(weights_hash(main_dir), weights_hash(kGolden + "hf-groups2"));
  EXPECT_EQ(weights_hash(v1_dir), weights_hash(kGolden + "hf-tied"));
  EXPECT_EQ(std::get<Mamba2Config>(load_model_config(main_dir + "/config.json")).ngroups,
            std::get<Mamba2Config>(load_model_config(kGolden + "hf-groups2/config.json")).ngroups);
  // An existing directory is still taken as a directory, before any id.
  EXPECT_EQ(resolve_model(kGolden + "hf-tied"), kGolden + "hf-tied");
}

TEST_F(HubCacheTest, AnIdNotInTheCacheSaysWhereItLookedAndHowToDownload) {
  const std::string m = error_of([] { resolve_model("state-spaces/mamba2-130m"); });
  EXPECT_NE(m.find("state-spaces/mamba2-130m"), std::string::npos) << m;
  EXPECT_NE(m.find(kCache + "/models--state-spaces--mamba2-130m"), std::string::npos) << m;
  EXPECT_NE(m.find("$HF_HUB_CACHE"), std::string::npos) << m;
  EXPECT_NE(m.find("huggingface-cli download state-spaces/mamba2-130m"), std::string::npos) << m;
  EXPECT_NE(m.find("never downloads"), std::string::npos) << m;
  // A path that is neither a directory nor an id keeps the plain message.
  const std::string p = error_of([] { resolve_model("/no/such/model"); });
  EXPECT_NE(p.find("/no/such/model: model directory not found"), std::string::npos) << p;
}

TEST_F(HubCacheTest, ARevisionNotCachedListsTheOnesThatAre) {
  const std::string m = error_of([] { resolve_model("statescope-test/tiny-mamba2@v2"); });
  EXPECT_NE(m.find("statescope-test/tiny-mamba2@v2"), std::string::npos) << m;
  EXPECT_NE(m.find("main -> bbbbbbbb2222"), std::string::npos) << m;
  EXPECT_NE(m.find("v1 -> aaaaaaaa1111"), std::string::npos) << m;
  EXPECT_NE(m.find("--revision v2"), std::string::npos) << m;
}

TEST_F(HubCacheTest, AnInterruptedDownloadIsNamed) {
  const std::string m = error_of([] { resolve_model("statescope-test/partial"); });
  EXPECT_NE(m.find("no weights"), std::string::npos) << m;
  EXPECT_NE(m.find("eeeeeeee5555"), std::string::npos) << m;
  // A copy of the cache whose weights blob is gone: the snapshot's symlink dangles.
  const fs::path copy = statescope::test::scratch("hub_copy");
  fs::copy(kCache, copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const fs::path snap = copy / "models--statescope-test--tiny-mamba1/snapshots/cccccccc33333333333333333333333333333333";
  fs::remove(snap.parent_path().parent_path() / "blobs" / fs::read_symlink(snap / "model.safetensors").filename());
  ::setenv("HF_HUB_CACHE", copy.c_str(), 1);
  const std::string d = error_of([] { resolve_model("statescope-test/tiny-mamba1"); });
  EXPECT_NE(d.find("no weights"), std::string::npos) << d;
  // A ref naming a snapshot that is not there.
  std::ofstream(copy / "models--statescope-test--tiny-mamba2/refs/main") << "ffffffffffffffffffffffffffffffffffffffff";
  const std::string r = error_of([] { resolve_model("statescope-test/tiny-mamba2"); });
  EXPECT_NE(r.find("names commit ffffffff"), std::string::npos) << r;
  EXPECT_NE(r.find("interrupted download"), std::string::npos) << r;
  std::ofstream(copy / "models--statescope-test--tiny-mamba2/refs/main") << "not a hash\n";
  const std::string h = error_of([] { resolve_model("statescope-test/tiny-mamba2"); });
  EXPECT_NE(h.find("not a commit hash"), std::string::npos) << h;
}

TEST_F(HubCacheTest, TheListingHasTheMambaModelsWithArchitectureAndSize) {
  std::vector<std::string> skipped;
  const auto models = list_cached_models(&skipped);
  ASSERT_EQ(models.size(), 4u);
  EXPECT_EQ(models[0].id, "state-spaces/tiny-mamba2-test");
  EXPECT_EQ(models[1].id, "statescope-test/tiny-mamba1");
  EXPECT_EQ(models[1].architecture, "Mamba-1");
  EXPECT_EQ(models[2].id, "statescope-test/tiny-mamba2");  // main before the tag
  EXPECT_EQ(models[2].commit, kMain);
  EXPECT_EQ(models[3].id, "statescope-test/tiny-mamba2@v1");
  EXPECT_EQ(models[3].architecture, "Mamba-2");
  const ModelConfig groups2 = load_model_config(kGolden + "hf-groups2/config.json");
  EXPECT_EQ(models[2].parameters, parameter_count(groups2));
  EXPECT_EQ(models[2].n_layer, n_layer(groups2));
  EXPECT_EQ(models[2].weight_bytes, fs::file_size(kGolden + "hf-groups2/model.safetensors"));
  // Every listed id resolves to the listed snapshot.
  for (const auto& m : models) EXPECT_EQ(resolve_model(m.id), m.dir) << m.id;
  // A tokenizer-only repository, the other architecture and the interrupted download are left out,
  // each with its reason.
  ASSERT_EQ(skipped.size(), 3u);
  EXPECT_NE(skipped[0].find("EleutherAI/gpt-neox-20b: no config.json"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[1].find("statescope-test/not-a-mamba"), std::string::npos) << skipped[1];
  EXPECT_NE(skipped[1].find("llama"), std::string::npos) << skipped[1];
  EXPECT_NE(skipped[2].find("statescope-test/partial"), std::string::npos) << skipped[2];
  EXPECT_NE(skipped[2].find("no weights"), std::string::npos) << skipped[2];
  EXPECT_NE(describe_cached_model(models[2]).find("Mamba-2"), std::string::npos);
  // An empty or missing cache lists nothing and is not an error.
  ::setenv("HF_HUB_CACHE", "/no/such/cache", 1);
  EXPECT_TRUE(list_cached_models().empty());
}

TEST_F(HubCacheTest, AStateSpacesCheckpointTakesGptNeoxsTokenizerFromTheCache) {
  // The official checkpoints ship no tokenizer.json; the cached EleutherAI/gpt-neox-20b's is theirs.
  const std::string dir = resolve_model("state-spaces/tiny-mamba2-test");
  EXPECT_FALSE(fs::exists(fs::path(dir) / "tokenizer.json"));
  EXPECT_EQ(companion_tokenizer(dir), kCache + "/models--EleutherAI--gpt-neox-20b/snapshots/1111111188888888888888888888888888888888/tokenizer.json");
  EXPECT_EQ(load_tokenizer(dir)->vocab_size(), 4003);
  // Any other model without tokenizer.json reads bytes, as before.
  EXPECT_EQ(companion_tokenizer(resolve_model("statescope-test/tiny-mamba2")), "");
  EXPECT_EQ(load_tokenizer(resolve_model("statescope-test/tiny-mamba2"))->vocab_size(), 256);
  // Without gpt-neox-20b in the cache: an error that says which file to fetch, never bytes in silence.
  const fs::path copy = statescope::test::scratch("hub_no_neox");
  fs::copy(kCache, copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove_all(copy / "models--EleutherAI--gpt-neox-20b");
  ::setenv("HF_HUB_CACHE", copy.c_str(), 1);
  const std::string m = error_of([] { load_tokenizer(resolve_model("state-spaces/tiny-mamba2-test")); });
  EXPECT_NE(m.find("huggingface-cli download EleutherAI/gpt-neox-20b tokenizer.json"), std::string::npos) << m;
}
