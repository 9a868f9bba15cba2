// test_compressed.cpp — compressed corpora written by the real tools (gzip, xz, zstd, several
// members or frames concatenated as `cat` makes them) read as the plain files read; truncated and
// corrupt files and decompression bombs stop with an error that names the file and where.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/base/error.h"
#include "core/data/compressed.h"
#include "core/data/dataset.h"
#include "tests/scratch.h"

using namespace statescope;
namespace fs = std::filesystem;

namespace {

struct Dir {  // a folder of this test process's scratch space (tests/scratch.h)
  fs::path p;
  explicit Dir(const std::string& name) : p(test::scratch(name)) { fs::create_directories(p); }
};

void sh(const std::string& cmd) { ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// JSON Lines of prose-like text; one line of 600 kB so lines cross the decoders' 256 kB buffers.
std::string corpus_jsonl(int lines) {
  std::mt19937 rng(7);
  const char* words[] = {"anne", "elliot", "captain", "wentworth", "bath", "\\u00e9t\\u00e9", "lyme", "\\\"quoted\\\""};
  std::string out;
  for (int i = 0; i < lines; ++i) {
    std::string text;
    const int n = i == 3 ? 100000 : 20 + static_cast<int>(rng() % 200);
    for (int k = 0; k < n; ++k) text += std::string(words[rng() % 8]) + (k % 17 == 16 ? ".\\n" : " ");
    out += "{\"text\": \"" + text + "\", \"id\": " + std::to_string(i) + "}\n";
  }
  return out;
}

std::vector<std::vector<int32_t>> documents(const std::string& data, const fs::path& cache, DataOptions o = {}) {
  o.cache_dir = cache.string();
  o.val_every = 4;
  o.pack_tokens = 64;  // one document per line: a line lost or merged shows
  ByteTokenizer tok;
  auto c = load_data(data, tok, o);
  std::vector<std::vector<int32_t>> out;
  for (auto* split : {&c.train, &c.validation})
    for (auto& d : *split) out.emplace_back(d.tokens.begin(), d.tokens.end());
  return out;
}

}  // namespace

TEST(Compressed, RealWritersReadAsThePlainFile) {
  Dir d("compressed_writers");
  const fs::path plain = d.p / "c.jsonl";
  std::ofstream(plain, std::ios::binary) << corpus_jsonl(40);
  const auto want = documents(plain.string(), d.p / "cache");
  ASSERT_GT(want.size(), 10u);
  const std::string q = "'" + plain.string() + "'";
  sh("gzip -c " + q + " > " + q + ".gz");
  sh("xz -c " + q + " > " + q + ".xz");
  sh("zstd -q -c " + q + " > " + q + ".zst");
  // Several members / streams / frames: the file cut in two, each half compressed, concatenated.
  const std::string text = slurp(plain);
  const size_t half = text.find('\n', text.size() / 2) + 1;
  std::ofstream(d.p / "a.part", std::ios::binary) << text.substr(0, half);
  std::ofstream(d.p / "b.part", std::ios::binary) << text.substr(half);
  const std::string a = "'" + (d.p / "a.part").string() + "'", b = "'" + (d.p / "b.part").string() + "'";
  const std::string multi = "'" + (d.p / "multi").string();
  sh("(gzip -c " + a + "; gzip -c " + b + ") > " + multi + ".jsonl.gz'");
  sh("(xz -c " + a + "; xz -c " + b + ") > " + multi + ".jsonl.xz'");
  sh("(zstd -q -c " + a + "; zstd -q -c " + b + ") > " + multi + ".jsonl.zst'");
  for (const std::string f : {plain.string() + ".gz", plain.string() + ".xz", plain.string() + ".zst",
                              (d.p / "multi.jsonl.gz").string(), (d.p / "multi.jsonl.xz").string(),
                              (d.p / "multi.jsonl.zst").string()})
    EXPECT_EQ(documents(f, d.p / "cache"), want) << f;
  // Plain text compressed, and a folder of compressed files, read as their plain twins.
  const fs::path txt = d.p / "t" / "book.txt";
  fs::create_directories(txt.parent_path());
  std::ofstream(txt, std::ios::binary) << text;
  const auto want_txt = documents(txt.string(), d.p / "cache");
  sh("gzip -k '" + txt.string() + "'");
  EXPECT_EQ(documents(txt.string() + ".gz", d.p / "cache"), want_txt);
  fs::remove(txt);
  fs::copy_file(plain.string() + ".zst", d.p / "t" / "c.jsonl.zst");
  const auto folder = documents((d.p / "t").string(), d.p / "cache");  // book.txt.gz whole, c.jsonl.zst per line
  EXPECT_EQ(folder.size(), want.size() + 1);
}

TEST(Compressed, TruncatedAndCorruptFilesNameTheFileAndTheOffset) {
  Dir d("compressed_bad");
  const fs::path plain = d.p / "c.jsonl";
  std::ofstream(plain, std::ios::binary) << corpus_jsonl(12);
  const std::string q = "'" + plain.string() + "'";
  sh("gzip -c " + q + " > " + q + ".gz; xz -c " + q + " > " + q + ".xz; zstd -q -c " + q + " > " + q + ".zst");
  for (const char* ext : {".gz", ".xz", ".zst"}) {
    const std::string whole = slurp(plain.string() + ext);
    const fs::path cut = d.p / (std::string("cut.jsonl") + ext), bad = d.p / (std::string("bad.jsonl") + ext);
    std::ofstream(cut, std::ios::binary) << whole.substr(0, whole.size() / 2);
    std::string flipped = whole;
    for (size_t i = whole.size() / 3; i < whole.size() / 3 + 64; ++i) flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    std::ofstream(bad, std::ios::binary) << flipped;
    for (const fs::path& f : {cut, bad}) {
      try {
        documents(f.string(), d.p / "cache");
        ADD_FAILURE() << f << " was read";
      } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(f.string()), std::string::npos) << m;
        EXPECT_TRUE(m.find(" at byte ") != std::string::npos || m.find(":") != std::string::npos) << m;
        if (f == cut) EXPECT_NE(m.find("truncated"), std::string::npos) << m;
      }
    }
  }
  // Not compressed at all, under a compressed name.
  std::ofstream(d.p / "plain.jsonl.zst", std::ios::binary) << corpus_jsonl(2);
  EXPECT_THROW(documents((d.p / "plain.jsonl.zst").string(), d.p / "cache"), Error);
  std::ofstream(d.p / "tok.u16.gz", std::ios::binary) << "xx";
  try {
    documents((d.p / "tok.u16.gz").string(), d.p / "cache");
    ADD_FAILURE() << "a compressed token file was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compressed token files"), std::string::npos) << e.what();
  }
}

TEST(Compressed, BombsAndEndlessLinesStopAtTheirLimits) {
  Dir d("compressed_bomb");
  // 64 MiB of one JSON line, a few kB compressed.
  const std::string bomb = (d.p / "bomb.jsonl.zst").string(), gz = (d.p / "bomb.jsonl.gz").string();
  sh("(printf '{\"text\": \"'; head -c 67108864 /dev/zero | tr '\\0' a; printf '\"}\\n') | zstd -q -c > '" + bomb + "'");
  sh("(printf '{\"text\": \"'; head -c 67108864 /dev/zero | tr '\\0' a; printf '\"}\\n') | gzip -c > '" + gz + "'");
  ASSERT_LT(fs::file_size(bomb), 64u << 10);
  DataOptions o;
  o.max_line_bytes = 1 << 20;
  for (const auto& f : {bomb, gz}) {
    try {
      documents(f, d.p / "cache", o);
      ADD_FAILURE() << f << " was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("line 1 is longer than 1048576 bytes"), std::string::npos) << e.what();
    }
  }
  o.max_line_bytes = int64_t{1} << 28;
  o.max_decompressed = 8 << 20;  // the limit a user sets
  try {
    documents(bomb, d.p / "cache", o);
    ADD_FAILURE() << "read past the limit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("decompresses to more than 8388608 bytes"), std::string::npos) << e.what();
  }
  // The default limit: 100x the file, at least 1 GiB, at most 64 GiB.
  EXPECT_EQ(default_decompressed_limit(10), uint64_t{1} << 30);
  EXPECT_EQ(default_decompressed_limit(uint64_t{100} << 20), uint64_t{10000} << 20);
  EXPECT_EQ(default_decompressed_limit(uint64_t{1} << 31), uint64_t{64} << 30);
  EXPECT_EQ(default_decompressed_limit(UINT64_MAX), uint64_t{64} << 30);
  // Streaming: the bytes come in pieces no larger than asked, and all of them arrive.
  ByteStream s(gz, Compression::Gzip);
  std::vector<char> buf(4096);
  uint64_t total = 0;
  for (size_t got; (got = s.read(buf.data(), buf.size())) > 0;) {
    ASSERT_LE(got, buf.size());
    total += got;
  }
  EXPECT_EQ(total, 67108864u + 13u);  // '{"text": "' and '"}\n' around the a's
}

// gzip of zeros (about 1000x) stops at the running-ratio guard, a little past 256 MiB, under the
// default limit; an explicit limit replaces the guard and reads it whole.
TEST(Compressed, TheDefaultGuardStopsAZeroBombByItsRatio) {
  Dir d("compressed_zeros");
  const std::string gz = (d.p / "zeros.txt.gz").string();
  sh("head -c 314572800 /dev/zero | gzip -1 -c > '" + gz + "'");
  ASSERT_LT(fs::file_size(gz), 2u << 20);
  std::vector<char> buf(1 << 20);
  uint64_t total = 0;
  try {
    ByteStream s(gz, Compression::Gzip);
    for (size_t got; (got = s.read(buf.data(), buf.size())) > 0;) total += got;
    ADD_FAILURE() << "read " << total << " bytes of zeros";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 100x"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("zeros.txt.gz"), std::string::npos) << e.what();
  }
  EXPECT_GT(total, kRatioAfter - (2u << 20));
  EXPECT_LT(total, kRatioAfter + (2u << 20));
  ByteStream all(gz, Compression::Gzip, uint64_t{1} << 30);
  total = 0;
  for (size_t got; (got = all.read(buf.data(), buf.size())) > 0;) total += got;
  EXPECT_EQ(total, 314572800u);
}
