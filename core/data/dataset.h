// dataset.h — text data of any size, tokenized once into a memory-mapped cache. No LibTorch.
//
// Sources (`data`):
//   "embedded"          the Austen corpus (validation = Persuasion), held in memory
//   a folder            every .txt file is one document, every .jsonl line one document (sorted by path)
//   file.jsonl          JSON Lines; each line an object with a string field "text"
//   .gz / .xz / .zst    any of the text kinds above compressed (pile.jsonl.zst, book.txt.gz), streamed
//                       through the decompressor (compressed.h); memory stays flat in the file size
//   file.u16 / .u32     pre-tokenized little-endian ids; documents end at the tokenizer's end-of-text id
//   any other file      UTF-8 text, cut at blank lines into documents of about `doc_bytes`
// Documents are read one at a time (memory does not grow with the corpus), encoded with the model's
// tokenizer, followed by its end-of-text id when it has one, and routed by order: every
// `val_every`-th document is validation (at least one is). Each split becomes one token file in the
// cache (uint16 when the vocabulary fits, else uint32) that is memory-mapped afterwards. Documents
// shorter than `pack_tokens` are packed back to back into Corpus documents of about that size (so
// windows of length T > a document still find text, as in LM pre-training); longer ones stand alone.
//
// Cache: <cache_dir>/<key>/{train.tok, validation.tok, index.json}; the key hashes the source paths,
// sizes and mtimes, the tokenizer file and the options, so editing a file re-tokenizes. Written in a
// temporary folder and renamed when complete: a cancelled or killed preparation leaves no cache.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/data/corpus.h"
#include "core/data/tokenizer.h"

namespace statescope {

struct DataOptions {
  int64_t doc_bytes = 32768;    // plain-text files: document size (cut at the next blank line)
  int val_every = 10;           // every val_every-th document is validation
  int64_t pack_tokens = 65536;  // short documents are packed into spans of about this many tokens
  std::string cache_dir;        // "" -> default_cache_dir()
  // Compressed files: the most one file may decompress to (0: 1000x its size, at least 1 GiB), so
  // a decompression bomb stops before it fills the disk; and the longest JSON line read (memory).
  uint64_t max_decompressed = 0;
  int64_t max_line_bytes = int64_t{1} << 28;  // 256 MiB
  std::string text_field = "text";  // JSON Lines: the field holding each document; Parquet: the column
};

// Bytes of source read so far and in all; return false to cancel (throws Error "cancelled").
using DataProgressFn = std::function<bool(int64_t done, int64_t total)>;

// `data` as a path: itself when it exists (or "embedded"); a Hugging Face dataset id ("owner/name",
// "owner/name@revision") names its snapshot folder in the local cache (hub_cache.h; Error saying
// where it looked otherwise), whose .parquet/.jsonl/.txt files are then read.
std::string resolve_data_source(const std::string& data);

// Throws Error naming the file (and line or position) on anything unreadable.
Corpus load_data(const std::string& data, const Tokenizer& tok, const DataOptions& opt = {},
                 const DataProgressFn& progress = {});

// The model directory picks the tokenizer (tokenizer.json -> BPE, else bytes; "" -> bytes, for a
// model trained from scratch); throws Error when its ids do not fit the model's `model_vocab`.
Corpus load_model_data(const std::string& data, const std::string& model_dir, int64_t model_vocab,
                       const DataOptions& opt = {}, const DataProgressFn& progress = {});

// The format of a token cache entry's index.json (its "format" field); an entry without it is not ours.
inline constexpr const char* kTokenCacheFormat = "statescope-tokens-v1";
// $STATESCOPE_CACHE, else $XDG_CACHE_HOME/statescope/tokens, else ~/.cache/statescope/tokens.
std::string default_cache_dir();

}  // namespace statescope
