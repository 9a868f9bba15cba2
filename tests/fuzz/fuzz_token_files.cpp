// fuzz_token_files.cpp — text data sources read into the token cache and mapped back: .u16 / .u32
// token files, .jsonl, plain text, and .jsonl compressed with gzip, xz or zstd (compressed.h).
// Input: one byte picks the kind, the rest is the file. Each run
// prepares a fresh cache (removed afterwards) and reads every document of both splits.
// Seeds: snippets of the embedded corpus in each kind (bench/fuzz.sh).
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/data/tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* kinds[] = {"data.u16", "data.u32", "data.jsonl", "data.txt", "data.jsonl.gz", "data.jsonl.xz",
                                "data.jsonl.zst"};
  const auto path = statescope::fuzz::write_file(kinds[data[0] % 7], data + 1, size - 1);
  statescope::DataOptions o;
  o.cache_dir = (statescope::fuzz::scratch() / "cache").string();
  o.doc_bytes = 64;  // small documents and packs: many documents from a small input
  o.pack_tokens = 32;
  o.val_every = 3;
  o.max_decompressed = 1 << 22;  // a bomb among the inputs stops at 4 MiB
  o.max_line_bytes = 1 << 20;
  statescope::ByteTokenizer tok;
  try {
    auto c = statescope::load_data(path, tok, o);
    volatile int64_t sum = 0;
    for (auto* split : {&c.train, &c.validation})
      for (auto& d : *split)
        for (int32_t id : d.tokens) {
          if (id < 0 || id >= tok.vocab_size()) __builtin_trap();  // an id the vocabulary lacks got through
          sum = sum + id;
        }
  } catch (const statescope::Error&) {
  }
  std::error_code ec;
  std::filesystem::remove_all(o.cache_dir, ec);
  std::filesystem::remove(path, ec);
  return 0;
}
