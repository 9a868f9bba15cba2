// test_dataset.cpp — folders, JSON Lines, text and token files through the token cache: document
// routing, end-of-text separators, packing, cache reuse and invalidation, cancellation, refusals.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/data/dataset.h"
#include "core/base/error.h"
#include "core/data/token_cache.h"

#include <nlohmann/json.hpp>
#include "tests/error_text.h"

using namespace statescope;
namespace fs = std::filesystem;

namespace {

const std::string kTokenizerDir = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/tokenizer";

struct TempDir {
  fs::path p;
  explicit TempDir(const std::string& name) : p(fs::temp_directory_path() / ("statescope_" + name)) {
    fs::remove_all(p);
    fs::create_directories(p);
  }
  ~TempDir() { fs::remove_all(p); }
};

DataOptions opts(const fs::path& cache, int val_every = 10, int64_t pack = 65536, int64_t doc_bytes = 32768) {
  DataOptions o;
  o.cache_dir = cache.string();
  o.val_every = val_every;
  o.pack_tokens = pack;
  o.doc_bytes = doc_bytes;
  return o;
}

std::string joined(const std::vector<Document>& docs) {
  std::string s;
  for (auto& d : docs) s += decode_bytes(d.tokens);
  return s;
}

// A corpus folder t/src of n small documents f<i>.txt ("document <i>").
fs::path small_corpus(const TempDir& t, int n) {
  const auto src = t.p / "src";
  fs::create_directories(src);
  for (int i = 0; i < n; ++i) std::ofstream(src / ("f" + std::to_string(i) + ".txt")) << "document " << i << "\n";
  return src;
}

std::vector<int32_t> all_ids(const std::vector<Document>& docs) {
  std::vector<int32_t> v;
  for (auto& d : docs) v.insert(v.end(), d.tokens.begin(), d.tokens.end());
  return v;
}

}  // namespace

TEST(Dataset, FolderOfTextFilesOneDocumentEach) {
  TempDir t("ds_folder");
  const auto src = t.p / "src";
  fs::create_directories(src / "sub");
  for (int i = 0; i < 12; ++i)
    std::ofstream(src / (i < 6 ? "" : "sub") / ("f" + std::to_string(100 + i) + ".txt")) << "text " << i << "\n";
  std::ofstream(src / "ignored.md") << "not text";
  ByteTokenizer bytes;
  auto c = load_data(src.string(), bytes, opts(t.p / "cache"));
  EXPECT_EQ(c.train_documents, 11);
  EXPECT_EQ(c.validation_documents, 1);  // the 10th in path order: sub/f109.txt
  EXPECT_EQ(joined(c.validation), "text 9\n");
  std::string train;
  for (int i = 0; i < 12; ++i)
    if (i != 9) train += "text " + std::to_string(i) + "\n";
  EXPECT_EQ(joined(c.train), train);   // bytes have no end-of-text id: documents back to back
  ASSERT_EQ(c.train.size(), 1u);       // all short: packed into one span
  EXPECT_TRUE(c.train[0].tokens.mapped());
  EXPECT_EQ(c.train[0].name, "f100.txt (+10 documents)");
  EXPECT_FALSE(c.cache.empty());
}

TEST(Dataset, TextFileCutAtBlankLines) {
  TempDir t("ds_text");
  const auto file = t.p / "one.txt";
  std::string text;
  for (int p = 0; p < 50; ++p) text += "paragraph " + std::to_string(p) + " with some words in it.\n\n";
  std::ofstream(file) << text;
  ByteTokenizer bytes;
  auto d = load_data(file.string(), bytes, opts(t.p / "cache", 3, /*pack=*/1, /*doc_bytes=*/200));
  EXPECT_GT(d.train.size(), 2u);
  EXPECT_EQ(d.train.size() + d.validation.size(), static_cast<size_t>(d.train_documents + d.validation_documents));
  EXPECT_EQ(d.train_tokens() + d.validation_tokens(), static_cast<int64_t>(text.size()));
  for (auto& doc : d.train) {
    const auto s = decode_bytes(doc.tokens);
    EXPECT_EQ(s.substr(0, 9), "paragraph") << doc.name;
    EXPECT_EQ(s.substr(s.size() - 2), "\n\n") << doc.name;
    EXPECT_GE(s.size(), 200u) << doc.name;  // cut at the first blank line after 200 bytes (or the end)
  }
  // Every third document is validation: the train and validation documents interleave 2:1.
  EXPECT_EQ(d.validation_documents, (d.train_documents + d.validation_documents) / 3);
}

TEST(Dataset, JsonLinesWithBpeAndEndOfText) {
  TempDir t("ds_jsonl");
  auto tok = load_tokenizer(kTokenizerDir);
  ASSERT_EQ(tok->kind(), "bpe");
  ASSERT_EQ(tok->eos_id(), 0);
  const auto file = t.p / "docs.jsonl";
  std::vector<std::string> texts;
  {
    std::ofstream f(file);
    for (int i = 0; i < 7; ++i) {
      texts.push_back("Document " + std::to_string(i) + ": caf\u00e9 \u00fcber na\u00efve, 12345   spaces.\n");
      f << nlohmann::json{{"text", texts.back()}, {"id", i}}.dump() << "\n";
      if (i == 3) f << "\n";  // blank lines are skipped
    }
  }
  auto c = load_data(file.string(), *tok, opts(t.p / "cache", 3, /*pack=*/1));
  EXPECT_EQ(c.tokenizer, "bpe");
  ASSERT_EQ(c.train_documents, 5);
  ASSERT_EQ(c.validation_documents, 2);  // documents 2 and 5
  std::vector<int32_t> want_val;
  for (int i : {2, 5}) {
    auto ids = tok->encode(texts[i]);
    want_val.insert(want_val.end(), ids.begin(), ids.end());
    want_val.push_back(0);  // <|endoftext|> after every document
  }
  EXPECT_EQ(all_ids(c.validation), want_val);
  ASSERT_EQ(c.train.size(), 5u);  // pack 1: one Document per source document
  EXPECT_EQ(c.train[0].name, "docs.jsonl:1");
  EXPECT_EQ(c.train[4].name, "docs.jsonl:8");  // line 5 is blank
  EXPECT_EQ(c.train[4].tokens[c.train[4].tokens.size() - 1], 0);
  EXPECT_EQ(tok->decode(c.train[4].tokens.to_vector()), texts[6] + "<|endoftext|>");
  EXPECT_EQ(c.train[0].tokens.mapped(), true);

  auto refusal = [&](const char* name, const char* text) {  // what loading a file of `text` says
    std::ofstream(t.p / name) << text;
    return statescope::test::error_of([&] { load_data((t.p / name).string(), *tok, opts(t.p / "cache")); });
  };
  const auto bad = refusal("bad.jsonl", "{\"text\": \"ok\"}\n{\"txt\": \"no\"}\n");
  EXPECT_NE(bad.find("bad.jsonl:2: needs a string field \"text\""), std::string::npos) << bad;
  const auto broken = refusal("broken.jsonl", "{\"text\": \"ok\"}\n{\"text\": \"ok\"}\n{\"text\": unquoted}\n");
  EXPECT_NE(broken.find("broken.jsonl:3: not a JSON object"), std::string::npos) << broken;
  EXPECT_FALSE(fs::exists(t.p / "cache") && std::any_of(fs::directory_iterator(t.p / "cache"), fs::directory_iterator(),
                                                        [](auto& e) { return e.path().string().find(".tmp-") != std::string::npos; }))
      << "a failed preparation left a temporary folder";
}

TEST(Dataset, TokenFilesSplitAtEndOfText) {
  TempDir t("ds_tokens");
  auto tok = load_tokenizer(kTokenizerDir);  // eos 0, vocab 4003
  std::vector<uint16_t> ids;
  std::vector<std::vector<int32_t>> docs;
  for (int d = 0; d < 9; ++d) {
    docs.emplace_back();
    for (int k = 0; k < 5 + d; ++k) docs.back().push_back(1 + (d * 131 + k * 17) % 4000);
    docs.back().push_back(0);
  }
  docs.back().pop_back();  // the last document has no trailing end-of-text: one is added
  for (auto& d : docs) ids.insert(ids.end(), d.begin(), d.end());
  docs.back().push_back(0);
  std::ofstream(t.p / "pile.u16", std::ios::binary).write(reinterpret_cast<const char*>(ids.data()), ids.size() * 2);
  std::vector<uint32_t> ids32(ids.begin(), ids.end());
  std::ofstream(t.p / "pile.u32", std::ios::binary).write(reinterpret_cast<const char*>(ids32.data()), ids32.size() * 4);
  for (const char* name : {"pile.u16", "pile.u32"}) {
    auto c = load_data((t.p / name).string(), *tok, opts(t.p / "cache", 4, 1));
    ASSERT_EQ(c.train_documents, 7) << name;
    ASSERT_EQ(c.validation_documents, 2) << name;  // documents 3 and 7
    std::vector<int32_t> want = docs[3];
    want.insert(want.end(), docs[7].begin(), docs[7].end());
    EXPECT_EQ(all_ids(c.validation), want) << name;
    EXPECT_EQ(c.train.back().tokens.to_vector(), docs[8]) << name;
  }
  ids[20] = 4003;  // outside the vocabulary
  std::ofstream(t.p / "bad.u16", std::ios::binary).write(reinterpret_cast<const char*>(ids.data()), ids.size() * 2);
  try {
    load_data((t.p / "bad.u16").string(), *tok, opts(t.p / "cache"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.u16: token 4003 at position 20"), std::string::npos) << e.what();
  }
  ByteTokenizer bytes;
  EXPECT_THROW(load_data((t.p / "pile.u16").string(), bytes, opts(t.p / "cache")), Error);  // no end-of-text id
  std::ofstream(t.p / "odd.u32", std::ios::binary) << "abcdef";
  EXPECT_THROW(load_data((t.p / "odd.u32").string(), *tok, opts(t.p / "cache")), Error);
}

TEST(Dataset, PackingKeepsLongDocumentsWhole) {
  TempDir t("ds_pack");
  const auto src = t.p / "src";
  fs::create_directories(src);
  // 20 short documents (10 bytes) and one long one (500 bytes) in the middle.
  for (int i = 0; i < 21; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "d%02d.txt", i);
    std::ofstream(src / name) << (i == 10 ? std::string(500, 'L') : std::string(9, 'a' + i % 26) + "\n");
  }
  ByteTokenizer bytes;
  auto c = load_data(src.string(), bytes, opts(t.p / "cache", 100, /*pack=*/40));
  EXPECT_EQ(c.validation_documents, 1);  // fewer than 100 documents: the last one validates
  EXPECT_EQ(joined(c.validation), std::string(9, 'a' + 20) + "\n");
  bool long_alone = false;
  for (auto& d : c.train) {
    if (d.tokens.size() == 500) long_alone = decode_bytes(d.tokens) == std::string(500, 'L');
    else EXPECT_LE(d.tokens.size(), 40u + 9u) << d.name;
  }
  EXPECT_TRUE(long_alone);
  EXPECT_EQ(c.train_tokens(), 19 * 10 + 500);
}

TEST(Dataset, CacheIsReusedAndInvalidatedByEdits) {
  TempDir t("ds_cache");
  const auto src = small_corpus(t, 4);
  ByteTokenizer bytes;
  int calls = 0;
  auto count = [&](int64_t, int64_t) { ++calls; return true; };
  auto a = load_data(src.string(), bytes, opts(t.p / "cache", 2), count);
  EXPECT_GT(calls, 0);
  calls = 0;
  auto b = load_data(src.string(), bytes, opts(t.p / "cache", 2), count);
  EXPECT_EQ(calls, 0) << "the second load re-tokenized";
  EXPECT_EQ(a.cache, b.cache);
  EXPECT_EQ(joined(a.train), joined(b.train));
  auto other = load_data(src.string(), bytes, opts(t.p / "cache", 3), count);  // options are part of the key
  EXPECT_NE(other.cache, a.cache);
  std::ofstream(src / "f0.txt") << "edited document, longer\n";  // document 0: train
  calls = 0;
  auto c = load_data(src.string(), bytes, opts(t.p / "cache", 2), count);
  EXPECT_GT(calls, 0);
  EXPECT_NE(c.cache, a.cache);
  EXPECT_NE(joined(c.train).find("edited"), std::string::npos);
  EXPECT_EQ(joined(a.train).find("edited"), std::string::npos);  // the old mapping still reads its own file
}

TEST(Dataset, TokenCacheListsAndClearsStaleEntries) {
  TempDir t("ds_cache_admin");
  const auto src = t.p / "src", other = t.p / "other", cache = t.p / "cache";
  for (auto& d : {src, other}) {
    fs::create_directories(d);
    for (int i = 0; i < 3; ++i) std::ofstream(d / ("f" + std::to_string(i) + ".txt")) << "document " << i << "\n";
  }
  ByteTokenizer bytes;
  load_data(src.string(), bytes, opts(cache, 2));
  load_data(other.string(), bytes, opts(cache, 2));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::ofstream(src / "f0.txt") << "edited\n";
  const auto current = load_data(src.string(), bytes, opts(cache, 2)).cache;  // a new entry; the old one is superseded
  fs::create_directories(cache / "0123456789abcdef.tmp-999999999");                  // a killed preparation
  std::ofstream(cache / "0123456789abcdef.tmp-999999999" / "train.tok") << "xx";
  fs::create_directories(cache / "notes");                                    // not an entry: never touched
  auto entries = list_token_cache(cache.string());
  ASSERT_EQ(entries.size(), 4u);
  int superseded = 0, partial = 0, fine = 0;
  for (auto& e : entries) {
    EXPECT_GT(e.bytes, 0) << e.dir;
    superseded += e.superseded;
    partial += e.partial;
    fine += !e.stale();
    if (e.superseded) EXPECT_EQ(e.source, fs::absolute(src).string());
  }
  EXPECT_EQ(superseded, 1);
  EXPECT_EQ(partial, 1);
  EXPECT_EQ(fine, 2);
  for (size_t i = 1; i < entries.size(); ++i) EXPECT_GE(entries[i - 1].made, entries[i].made);  // newest first
  fs::remove_all(other);  // its source is gone
  EXPECT_GT(clear_token_cache(cache.string(), /*stale_only=*/true), 0);
  entries = list_token_cache(cache.string());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].dir, current);
  int calls = 0;
  load_data(src.string(), bytes, opts(cache, 2), [&](int64_t, int64_t) { ++calls; return true; });
  EXPECT_EQ(calls, 0) << "the current entry was removed";
  clear_token_cache(cache.string(), /*stale_only=*/false);
  EXPECT_TRUE(list_token_cache(cache.string()).empty());
  EXPECT_TRUE(fs::exists(cache / "notes"));
  EXPECT_TRUE(list_token_cache((t.p / "absent").string()).empty());
}

TEST(Dataset, CancelLeavesNoCache) {
  TempDir t("ds_cancel");
  const auto src = small_corpus(t, 6);
  ByteTokenizer bytes;
  int calls = 0;
  try {
    load_data(src.string(), bytes, opts(t.p / "cache", 2), [&](int64_t, int64_t) { return ++calls < 3; });
    FAIL() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cancelled"), std::string::npos);
  }
  EXPECT_TRUE(fs::is_empty(t.p / "cache"));
  auto c = load_data(src.string(), bytes, opts(t.p / "cache", 2));  // and a later load works
  EXPECT_EQ(c.train_documents + c.validation_documents, 6);
}

TEST(Dataset, ModelDirectoryPicksTheTokenizer) {
  TempDir t("ds_model");
  // The golden tokenizer folder acts as a model directory holding tokenizer.json.
  try {
    load_model_data("embedded", kTokenizerDir, 256);
    FAIL() << "a 4003-id tokenizer was accepted for a 256-token model";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4003 ids, more than the model's vocab_size 256"), std::string::npos) << e.what();
  }
  auto bpe = load_model_data("embedded", kTokenizerDir, 4003);
  auto bytes = load_model_data("embedded", "", 256);
  EXPECT_EQ(bpe.tokenizer, "bpe");
  EXPECT_EQ(bytes.tokenizer, "bytes");
  EXPECT_EQ(bpe.validation.size(), bytes.validation.size());  // same chapters
  EXPECT_LT(bpe.validation_tokens() * 2, bytes.validation_tokens());  // BPE: far fewer tokens than bytes
  auto tok = load_tokenizer(kTokenizerDir);
  EXPECT_EQ(tok->decode(bpe.validation[0].tokens.to_vector()), decode_bytes(bytes.validation[0].tokens) + "<|endoftext|>");
  EXPECT_THROW(load_data((t.p / "missing").string(), ByteTokenizer{}, opts(t.p / "cache")), Error);
}
