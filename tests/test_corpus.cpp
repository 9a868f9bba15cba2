// test_corpus.cpp — the embedded corpus split by novel and chapter (other sources: test_dataset.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/data/corpus.h"
#include "core/base/error.h"

using namespace statescope;
namespace fs = std::filesystem;

TEST(Corpus, AustenSplitsByNovelAndChapter) {
  const auto path = default_corpus_path();
  auto c = load_austen(path);
  EXPECT_EQ(c.train_tokens() + c.validation_tokens(), static_cast<int64_t>(fs::file_size(path)));
  ASSERT_GT(c.validation.size(), 20u);
  for (auto& d : c.validation) EXPECT_EQ(d.name.rfind("Persuasion/", 0), 0u) << d.name;
  for (auto& d : c.train) EXPECT_EQ(d.name.find("Persuasion"), std::string::npos) << d.name;
  EXPECT_GT(c.train.size(), 200u);  // one document per chapter
  EXPECT_EQ(decode_bytes(c.train.front().tokens).rfind("EMMA\n", 0), 0u);
  auto other = load_austen(path, "EMMA");
  for (auto& d : other.validation) EXPECT_EQ(d.name.rfind("EMMA/", 0), 0u);
  EXPECT_THROW(load_austen(path, "ULYSSES"), Error);
}
