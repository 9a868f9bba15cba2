// test_parquet.cpp — Parquet corpora written by pyarrow.parquet.write_table (tests/golden/parquet/
// make_parquet.py: snappy, zstd, none, large_string, nulls, several row groups, a dataset's shards)
// read as the JSON Lines file of the same documents reads; a dataset id in a Hugging Face cache that
// huggingface_hub wrote; and every way a file can be wrong, named with the file and the row group.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/data/parquet.h"
#include "tests/error_text.h"
#include "tests/scratch.h"

using namespace statescope;
using statescope::test::error_of;
namespace fs = std::filesystem;

namespace {

const std::string kDir = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/parquet/";

std::vector<std::string> jsonl_texts() {
  std::ifstream in(kDir + "texts.jsonl");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line).at("text"));
  return out;
}

std::vector<std::string> parquet_texts(const std::string& file, const std::string& column = "text",
                                       std::vector<int64_t>* rows = nullptr, ParquetSummary* summary = nullptr) {
  std::vector<std::string> out;
  auto s = read_parquet_texts(file, column, [&](int64_t row, std::string_view t) {
    out.emplace_back(t);
    if (rows) rows->push_back(row);
  });
  if (summary) *summary = s;
  return out;
}

std::pair<std::vector<int32_t>, std::vector<int32_t>> splits(const std::string& data, DataOptions o = {}) {
  o.cache_dir = test::scratch("parquet_cache");
  ByteTokenizer tok;
  const Corpus c = load_data(data, tok, o);
  std::pair<std::vector<int32_t>, std::vector<int32_t>> out;
  for (const auto& d : c.train) out.first.insert(out.first.end(), d.tokens.begin(), d.tokens.end());
  for (const auto& d : c.validation) out.second.insert(out.second.end(), d.tokens.begin(), d.tokens.end());
  return out;
}

}  // namespace

TEST(Parquet, EveryWritersFormatReadsTheDocumentsItWasGiven) {
  ASSERT_TRUE(parquet_available()) << "this build has no Arrow (tools/setup.sh installs pyarrow)";
  const auto expected = jsonl_texts();
  ASSERT_EQ(expected.size(), 61u);
  for (const auto& [file, groups] : std::vector<std::pair<std::string, int>>{
           {"default.parquet", 3}, {"zstd.parquet", 4}, {"none.parquet", 1}, {"large_string.parquet", 2}}) {
    ParquetSummary s;
    EXPECT_EQ(parquet_texts(kDir + file, "text", nullptr, &s), expected) << file;
    EXPECT_EQ(s.row_groups, groups) << file;
    EXPECT_EQ(s.rows, 61) << file;
    EXPECT_EQ(s.columns, (std::vector<std::string>{"text", "id"})) << file;
  }
  // Null texts are skipped; the other rows keep their numbers.
  std::vector<int64_t> rows;
  const auto with_nulls = parquet_texts(kDir + "nulls.parquet", "text", &rows);
  ASSERT_EQ(with_nulls.size(), 41u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NE(rows[i] % 3, 2);
    EXPECT_EQ(with_nulls[i], expected[static_cast<size_t>(rows[i])]);
  }
  // Another column by name (the text_field option).
  EXPECT_EQ(parquet_texts(kDir + "content.parquet", "content"), expected);
}

TEST(Parquet, ACorpusOfParquetReadsAsItsJsonLines) {
  // The same documents, in the same order, tokenized into the same train and validation splits: one
  // file, a folder of a dataset's shards, another column, and a dataset id in the Hugging Face cache.
  const auto want = splits(kDir + "texts.jsonl");
  ASSERT_FALSE(want.second.empty());
  EXPECT_EQ(splits(kDir + "default.parquet"), want);
  EXPECT_EQ(splits(kDir + "shards"), want);
  DataOptions content;
  content.text_field = "content";
  EXPECT_EQ(splits(kDir + "content.parquet", content), want);
  // The JSON Lines reader follows text_field too; a file without that field is named.
  const std::string m = error_of([&] { splits(kDir + "texts.jsonl", content); });
  EXPECT_NE(m.find("texts.jsonl:1: needs a string field \"content\""), std::string::npos) << m;

  const char* old = std::getenv("HF_HUB_CACHE");
  const std::string saved = old ? old : "";
  ::setenv("HF_HUB_CACHE", (std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/hf-cache/hub").c_str(), 1);
  EXPECT_EQ(splits("statescope-test/tiny-corpus"), want);
  EXPECT_NE(resolve_data_source("statescope-test/tiny-corpus").find("datasets--statescope-test--tiny-corpus/snapshots/22222222"),
            std::string::npos);
  const std::string missing = error_of([] { splits("statescope-test/no-such-corpus"); });
  EXPECT_NE(missing.find("datasets--statescope-test--no-such-corpus"), std::string::npos) << missing;
  EXPECT_NE(missing.find("huggingface-cli download --repo-type dataset statescope-test/no-such-corpus"), std::string::npos)
      << missing;
  old ? (void)::setenv("HF_HUB_CACHE", saved.c_str(), 1) : (void)::unsetenv("HF_HUB_CACHE");
}

TEST(Parquet, AWrongFileIsNamedWithWhatIsWrong) {
  const auto noop = [](int64_t, std::string_view) {};
  // No text column: the columns it has.
  std::string m = error_of([&] { read_parquet_texts(kDir + "content.parquet", "text", noop); });
  EXPECT_NE(m.find("content.parquet: no column \"text\" (the file has \"content\", \"id\""), std::string::npos) << m;
  EXPECT_NE(m.find("text_field"), std::string::npos) << m;
  // Not text.
  m = error_of([&] { read_parquet_texts(kDir + "binary.parquet", "text", noop); });
  EXPECT_NE(m.find("binary.parquet: column \"text\" holds binary, not text"), std::string::npos) << m;
  // Truncated: the footer is gone.
  const fs::path dir = test::scratch("parquet_bad");
  fs::create_directories(dir);
  std::ifstream in(kDir + "default.parquet", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir / "truncated.parquet", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  m = error_of([&] { read_parquet_texts((dir / "truncated.parquet").string(), "text", noop); });
  EXPECT_NE(m.find("truncated.parquet: not a readable Parquet file"), std::string::npos) << m;
  // Row group 1's pages overwritten: rows of group 0 come out, then the error names group 1.
  std::ifstream rd(kDir + "README.json");
  const auto meta = nlohmann::json::parse(rd);
  std::string damaged = bytes;
  const size_t at = meta.at("default_row_group_1_text_offset").get<size_t>();
  for (size_t i = 0; i < 64; ++i) damaged[at + i] = static_cast<char>(0xff);
  std::ofstream(dir / "damaged.parquet", std::ios::binary) << damaged;
  int64_t seen = 0;
  m = error_of([&] { read_parquet_texts((dir / "damaged.parquet").string(), "text", [&](int64_t, std::string_view) { ++seen; }); });
  EXPECT_NE(m.find("damaged.parquet: row group 1"), std::string::npos) << m;
  EXPECT_EQ(seen, 25);  // row group 0, whole
  // Not Parquet at all, and a compressed .parquet.
  std::ofstream(dir / "text.parquet") << "just some text\n";
  m = error_of([&] { read_parquet_texts((dir / "text.parquet").string(), "text", noop); });
  EXPECT_NE(m.find("text.parquet: not a readable Parquet file"), std::string::npos) << m;
  std::ofstream(dir / "x.parquet.gz") << "x";
  m = error_of([&] { splits((dir / "x.parquet.gz").string()); });
  EXPECT_NE(m.find("compresses its own columns"), std::string::npos) << m;
  // A FIFO is refused before it is opened (it would block).
  const fs::path fifo = dir / "fifo.parquet";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  m = error_of([&] { read_parquet_texts(fifo.string(), "text", noop); });
  EXPECT_NE(m.find("not a regular file"), std::string::npos) << m;
}

// A damaged size field must not take the machine's memory: a page that declares 2 GiB of text is
// refused by the reader's memory cap (kParquetMemoryCap) naming the row group, after the rows before it.
// The same cap, set below a real row group's size, refuses that row group too; at the default it reads.
TEST(Parquet, APageThatDeclaresGigabytesIsRefusedByTheMemoryCap) {
  std::ifstream in(kDir + "default.parquet", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ifstream rd(kDir + "README.json");
  const size_t at = nlohmann::json::parse(rd).at("default_row_group_1_text_offset").get<size_t>();
  // Row group 1's first page header (Thrift compact): type (field 1), uncompressed_page_size (field 2).
  ASSERT_EQ(bytes.substr(at, 4), std::string("\x15\x04\x15\x80", 4)) << "the fixture's page header moved";
  const size_t varint = at + 3, old_len = 3;  // 80 f6 01: 15744, zigzag-coded
  ASSERT_EQ(static_cast<unsigned char>(bytes[varint + old_len - 1]), 0x01u);
  const std::string huge("\xfe\xff\xff\xff\x0f", 5);  // INT32_MAX, zigzag-coded
  const fs::path dir = test::scratch("parquet_cap");
  fs::create_directories(dir);
  const fs::path file = dir / "huge_page.parquet";
  std::ofstream(file, std::ios::binary) << bytes.substr(0, varint) + huge + bytes.substr(varint + old_len);
  int64_t seen = 0;
  const auto count = [&](int64_t, std::string_view) { ++seen; };
  std::string m = error_of([&] { read_parquet_texts(file.string(), "text", count); });
  EXPECT_NE(m.find("huge_page.parquet: row group 1 needs more than 1024 MiB of memory to read"), std::string::npos) << m;
  EXPECT_NE(m.find("smaller row groups"), std::string::npos) << m;
  EXPECT_EQ(seen, 25);  // row group 0, whole

  // The cap itself: below what the file's footer and first row group take, it refuses; the default reads.
  seen = 0;
  m = error_of([&] { read_parquet_texts(kDir + "default.parquet", "text", count, {}, 8 << 10); });
  EXPECT_NE(m.find("default.parquet needs more than 8 KiB of memory to read"), std::string::npos) << m;
  EXPECT_EQ(seen, 0);
  EXPECT_EQ(parquet_texts(kDir + "default.parquet").size(), 61u);
}

// A dictionary-encoded text column (pandas' category; pyarrow's dictionary_encode) reads as the
// strings it encodes, repeated entries included, in row order across row groups.
TEST(Parquet, ADictionaryEncodedTextColumnReadsAsItsStrings) {
  auto want = jsonl_texts();
  const std::vector<std::string> first(want.begin(), want.begin() + 7);
  want.insert(want.end(), first.begin(), first.end());
  ParquetSummary summary;
  std::vector<int64_t> rows;
  const auto got = parquet_texts(kDir + "dictionary.parquet", "text", &rows, &summary);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "row " << i;
  EXPECT_EQ(summary.row_groups, 2);
  ASSERT_EQ(rows.size(), want.size());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i], static_cast<int64_t>(i));
}
