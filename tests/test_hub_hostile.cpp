// test_hub_hostile.cpp — a Hugging Face cache that links out of itself is refused by name, and nothing
// outside it is read, listed or quoted (core/base/contained.h). Each case starts from a copy of the
// cache huggingface_hub itself wrote (tests/golden/make_hf_cache.py) and makes one entry hostile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/base/contained.h"
#include "core/base/error.h"
#include "core/base/hub_cache.h"
#include "core/data/dataset.h"
#include "core/data/tokenizer.h"
#include "core/model/cached_models.h"
#include "core/model/model_registry.h"
#include "tests/error_text.h"
#include "tests/scratch.h"

using namespace statescope;
using statescope::test::error_of;
namespace fs = std::filesystem;

namespace {

const std::string kCache = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/hf-cache/hub";
const std::string kMain = "bbbbbbbb22222222222222222222222222222222";
const std::string kSecret = "SECRET-LINE-the-cache-must-never-quote";
const std::string kTiny = "models--statescope-test--tiny-mamba2";

// A fresh copy of the cache (links kept as links) and a folder outside it holding a secret, with
// HF_HUB_CACHE pointing at the copy for the test.
class HostileCache : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("HF_HUB_CACHE");
    saved_ = old ? std::optional<std::string>(old) : std::nullopt;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = statescope::test::scratch(std::string("hostile_") + info->name());
    fs::create_directories(root_);
    cache_ = root_ / "hub";
    fs::copy(kCache, cache_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    outside_ = root_ / "outside";
    fs::create_directories(outside_ / "sub");
    std::ofstream(outside_ / "secret.txt") << kSecret << "\n";
    std::ofstream(outside_ / "main") << kSecret << "\n";
    std::ofstream(outside_ / (kSecret + "-entry")) << "x\n";
    std::ofstream(outside_ / "sub" / "deep.txt") << kSecret << "\n";
    ::setenv("HF_HUB_CACHE", cache_.c_str(), 1);
  }
  void TearDown() override { saved_ ? (void)::setenv("HF_HUB_CACHE", saved_->c_str(), 1) : (void)::unsetenv("HF_HUB_CACHE"); }
  // Replaces `p` (file or folder) with a link to `target`.
  static void relink(const fs::path& p, const fs::path& target) {
    fs::remove_all(p);
    fs::is_directory(target) ? fs::create_directory_symlink(target, p) : fs::create_symlink(target, p);
  }
  static void expect_refused_without_secret(const std::string& m, const std::string& what) {
    EXPECT_NE(m, "(no error)") << what;
    EXPECT_EQ(m.find(kSecret), std::string::npos) << what << ": " << m;
  }
  fs::path root_, cache_, outside_;
  std::optional<std::string> saved_;
};

}  // namespace

TEST(Contained, APathIsWithinItsRootOnlyAfterEveryLinkIsResolved) {
  const fs::path d = statescope::test::scratch("contained_unit");
  fs::create_directories(d / "root" / "in");
  fs::create_directories(d / "elsewhere");
  std::ofstream(d / "elsewhere" / "f.txt") << "x";
  std::ofstream(d / "root" / "in" / "g.txt") << "y";
  fs::create_symlink(d / "elsewhere" / "f.txt", d / "root" / "out_link.txt");
  fs::create_symlink("in/g.txt", d / "root" / "in_link.txt");
  EXPECT_TRUE(path_within(resolved(d / "root" / "in_link.txt"), resolved(d / "root")));
  EXPECT_FALSE(path_within(resolved(d / "root" / "out_link.txt"), resolved(d / "root")));
  EXPECT_FALSE(path_within(resolved(d / "rootless"), resolved(d / "root")));  // a sibling with the same prefix
  EXPECT_EQ(error_of([&] { require_within(d / "root" / "in_link.txt", d / "root", "t"); }), "(no error)");
  const std::string m = error_of([&] { require_within(d / "root" / "out_link.txt", d / "root", "t"); });
  EXPECT_NE(m.find("out_link.txt: a link to"), std::string::npos) << m;
  EXPECT_NE(m.find("outside"), std::string::npos) << m;
  // A walk visits the files inside, refuses the link out by name, and stops past its bound.
  std::vector<std::string> seen;
  const std::string w = error_of([&] { walk_within(d / "root", [&](const fs::path&, const std::string& rel) { seen.push_back(rel); }); });
  EXPECT_NE(w.find("out_link.txt"), std::string::npos) << w;
  fs::remove(d / "root" / "out_link.txt");
  seen.clear();
  walk_within(d / "root", [&](const fs::path&, const std::string& rel) { seen.push_back(rel); });
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"in/g.txt", "in_link.txt"}));
  const std::string big = error_of([&] { walk_within(d / "root", [](const fs::path&, const std::string&) {}, 2); });
  EXPECT_NE(big.find("more than 2 entries"), std::string::npos) << big;
}

TEST_F(HostileCache, ARefLinkedOutsideIsRefusedAndNeverQuoted) {
  relink(cache_ / kTiny / "refs" / "main", outside_ / "main");
  const std::string m = error_of([] { resolve_model("statescope-test/tiny-mamba2"); });
  expect_refused_without_secret(m, "refs/main -> outside");
  EXPECT_NE(m.find("outside"), std::string::npos) << m;
  // A damaged ref inside the cache is named without its contents either.
  fs::remove(cache_ / kTiny / "refs" / "main");
  std::ofstream(cache_ / kTiny / "refs" / "main") << kSecret;
  const std::string d = error_of([] { resolve_model("statescope-test/tiny-mamba2"); });
  expect_refused_without_secret(d, "refs/main holding text");
  EXPECT_NE(d.find("not a commit hash"), std::string::npos) << d;
}

TEST_F(HostileCache, SnapshotsLinkedToAnotherFolderAreNeitherListedNorRead) {
  relink(cache_ / kTiny / "snapshots", outside_);
  const std::string m = error_of([] { resolve_model("statescope-test/tiny-mamba2@bbbbbbbb2222"); });
  expect_refused_without_secret(m, "snapshots -> outside");
  std::vector<std::string> skipped;
  for (const auto& c : list_cached_models(&skipped)) {
    EXPECT_EQ(c.id.find(kSecret), std::string::npos) << c.id;
    EXPECT_EQ(c.dir.find("outside"), std::string::npos) << c.dir;
  }
  for (const auto& s : skipped) EXPECT_EQ(s.find(kSecret), std::string::npos) << s;
}

TEST_F(HostileCache, RefsLinkedToAnotherFolderGiveNoRevisions) {
  relink(cache_ / kTiny / "refs", outside_);
  EXPECT_TRUE(hub_refs((cache_ / kTiny).string()).empty());
  const std::string m = error_of([] { resolve_model("statescope-test/tiny-mamba2"); });  // refs/main -> outside/main
  expect_refused_without_secret(m, "refs -> outside");
}

TEST_F(HostileCache, ASnapshotLinkedToTheFilesystemIsRefusedBeforeAnyWalk) {
  relink(cache_ / "datasets--statescope-test--tiny-corpus" / "snapshots" / "2222222299999999999999999999999999999999",
         outside_);
  const std::string d = error_of([] { resolve_data_source("statescope-test/tiny-corpus"); });
  expect_refused_without_secret(d, "dataset snapshot -> outside");
  EXPECT_NE(d.find("outside"), std::string::npos) << d;
  relink(cache_ / kTiny / "snapshots" / kMain, "/");
  const std::string m = error_of([] { resolve_model("statescope-test/tiny-mamba2"); });
  EXPECT_NE(m.find("outside"), std::string::npos) << m;
}

TEST_F(HostileCache, AFileInASnapshotLinkedOutsideItsRepositoryIsRefused) {
  relink(cache_ / kTiny / "snapshots" / kMain / "config.json", outside_ / "secret.txt");
  const std::string m = error_of([] { resolve_model("statescope-test/tiny-mamba2"); });
  expect_refused_without_secret(m, "config.json -> outside");
  EXPECT_NE(m.find("config.json"), std::string::npos) << m;
  // A subfolder linked outside is refused too, not walked.
  fs::remove(cache_ / kTiny / "snapshots" / kMain / "config.json");
  fs::copy_file(kCache + "/" + kTiny + "/snapshots/" + kMain + "/config.json", cache_ / kTiny / "snapshots" / kMain / "config.json");
  fs::create_directory_symlink(outside_ / "sub", cache_ / kTiny / "snapshots" / kMain / "extra");
  const std::string s = error_of([] { resolve_model("statescope-test/tiny-mamba2"); });
  EXPECT_NE(s.find("extra"), std::string::npos) << s;
}

// A folder inside a dataset snapshot, named as a path, still reads its blob links (the bound is the
// repository), and a link out of it is still refused.
TEST_F(HostileCache, AFolderInsideASnapshotReadsItsBlobs) {
  const fs::path snap = cache_ / "datasets--statescope-test--tiny-corpus" / "snapshots" / "2222222299999999999999999999999999999999";
  EXPECT_EQ(hub_repo_of_snapshot((snap / "data").string()), (cache_ / "datasets--statescope-test--tiny-corpus").string());
  EXPECT_EQ(hub_repo_of_snapshot(outside_.string()), "");
  DataOptions o;
  o.cache_dir = (root_ / "tokens").string();
  const auto bytes = load_tokenizer("");
  EXPECT_EQ(error_of([&] { load_data((snap / "data").string(), *bytes, o); }), "(no error)");
  fs::create_symlink(outside_ / "secret.txt", snap / "data" / "more.txt");
  const std::string m = error_of([&] { load_data((snap / "data").string(), *bytes, o); });
  expect_refused_without_secret(m, "a link out of a snapshot's subfolder");
}

TEST_F(HostileCache, ARepositoryFolderLinkedOutsideTheCacheIsNotListed) {
  fs::create_directories(outside_ / "repo");
  fs::copy(cache_ / kTiny, outside_ / "repo" / kTiny, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  relink(cache_ / kTiny, outside_ / "repo" / kTiny);
  for (const auto& c : list_cached_models()) EXPECT_NE(c.id, "statescope-test/tiny-mamba2");
  const std::string m = error_of([] { resolve_model("statescope-test/tiny-mamba2"); });
  EXPECT_NE(m.find("outside"), std::string::npos) << m;
}

TEST_F(HostileCache, ControlCharactersInFolderNamesArePrintedEscaped) {
  const fs::path snaps = cache_ / kTiny / "snapshots";
  fs::create_directory_symlink(kMain, snaps / "\x1b[31mred");
  std::vector<std::string> skipped;
  const auto models = list_cached_models(&skipped);
  for (const auto& c : models) EXPECT_EQ(c.id.find('\x1b'), std::string::npos) << c.id;
  bool named = false;
  for (const auto& s : skipped) {
    EXPECT_EQ(s.find('\x1b'), std::string::npos) << s;
    named = named || s.find("\\x1B[31mred") != std::string::npos;
  }
  EXPECT_TRUE(named);
  const std::string m = error_of([] { resolve_model("statescope-test/tiny-mamba2@v9"); });  // lists what is cached
  EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
  EXPECT_NE(m.find("\\x1B[31mred"), std::string::npos) << m;
}

TEST_F(HostileCache, ACorpusFolderIsNeverLeft) {
  // A user's corpus folder with a link to a file outside it: refused by name, nothing outside read.
  const fs::path corpus = root_ / "corpus";
  fs::create_directories(corpus);
  std::ofstream(corpus / "a.txt") << "Some text of the corpus itself.\n";
  fs::create_symlink(outside_ / "secret.txt", corpus / "b.txt");
  DataOptions o;
  o.cache_dir = (root_ / "tokens").string();
  const auto bytes = load_tokenizer("");
  const std::string m = error_of([&] { load_data(corpus.string(), *bytes, o); });
  expect_refused_without_secret(m, "corpus/b.txt -> outside");
  EXPECT_NE(m.find("b.txt"), std::string::npos) << m;
  // A link to a folder outside: refused as well, never walked.
  fs::remove(corpus / "b.txt");
  fs::create_directory_symlink(outside_ / "sub", corpus / "more");
  const std::string f = error_of([&] { load_data(corpus.string(), *bytes, o); });
  EXPECT_NE(f.find("more"), std::string::npos) << f;
  // Inside links are followed: the corpus reads.
  fs::remove(corpus / "more");
  fs::create_symlink("a.txt", corpus / "c.txt");
  EXPECT_EQ(error_of([&] { load_data(corpus.string(), *bytes, o); }), "(no error)");
}
