// token_cache.h — what the token cache (dataset.h) holds on disk, and removing it: every entry with
// its source, tokenizer, size and date; stale entries are those whose source is gone, those
// superseded by a newer entry for the same source, tokenizer and options (the source was edited),
// and folders left by a killed preparation. No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

struct TokenCacheEntry {
  std::string dir;             // <cache>/<key> (or <key>.tmp-PID for a partial one)
  std::string source;          // absolute path of the data it was made from ("" when unreadable)
  std::string tokenizer;       // tokenizer kind ("bytes", "bpe")
  int64_t bytes = 0;           // on disk
  int64_t made = 0;            // seconds since the epoch (index.json's modification time)
  bool source_missing = false;
  bool superseded = false;     // a newer entry has the same source, tokenizer and options
  bool partial = false;        // an interrupted preparation (its process is gone)
  bool stale() const { return source_missing || superseded || partial; }
};

// Entries of `cache_dir` ("" = default_cache_dir()), newest first; an absent folder has none.
std::vector<TokenCacheEntry> list_token_cache(const std::string& cache_dir);
// Removes every entry, or only the stale ones. Returns the bytes freed. A preparation still running
// in another process is never touched. Throws Error naming a folder that cannot be removed.
int64_t clear_token_cache(const std::string& cache_dir, bool stale_only);

}  // namespace statescope
