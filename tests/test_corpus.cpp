// test_corpus.cpp — the embedded corpus split by novel and chapter, and arbitrary text files/folders.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/corpus.h"
#include "core/error.h"

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

TEST(Corpus, TextFileAndFolder) {
  const auto dir = fs::temp_directory_path() / "statescope_corpus";
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  for (int i = 0; i < 12; ++i)
    std::ofstream(dir / (i < 6 ? "" : "sub") / ("f" + std::to_string(100 + i) + ".txt")) << "text " << i << "\n";
  std::ofstream(dir / "ignored.md") << "not text";
  auto c = load_text(dir.string(), 100, 10);
  EXPECT_EQ(c.train.size() + c.validation.size(), 12u);
  EXPECT_EQ(c.validation.size(), 1u);  // every 10th document
  // One file, split at blank lines into documents of about doc_bytes.
  const auto file = dir / "one.txt";
  {
    std::ofstream f(file);
    for (int p = 0; p < 50; ++p) f << "paragraph " << p << " with some words in it.\n\n";
  }
  auto d = load_text(file.string(), 200, 3);
  EXPECT_GT(d.train.size(), 2u);
  EXPECT_GT(d.validation.size(), 0u);
  int64_t total = d.train_tokens() + d.validation_tokens();
  EXPECT_EQ(total, static_cast<int64_t>(fs::file_size(file)));
  for (auto& doc : d.train) EXPECT_EQ(decode_bytes(doc.tokens).substr(0, 9), "paragraph");
  EXPECT_THROW(load_text((dir / "nope").string()), Error);
  std::ofstream(dir / "tiny.txt") << "x";
  EXPECT_THROW(load_text((dir / "tiny.txt").string()), Error);
}
