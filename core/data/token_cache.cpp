// token_cache.cpp — see token_cache.h.
#include "core/data/token_cache.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/data/dataset.h"
#include "core/base/error.h"
#include "core/base/file_io.h"

namespace statescope {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

int64_t folder_bytes(const fs::path& dir) {
  int64_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) n += static_cast<int64_t>(it->file_size(ec));
  return n;
}

int64_t seconds(fs::file_time_type t) {
  const auto sys = std::chrono::file_clock::to_sys(t);
  return std::chrono::duration_cast<std::chrono::seconds>(sys.time_since_epoch()).count();
}

// What a cache entry holds: nothing else. A folder with any other file is not ours to remove.
bool holds_only_entry_files(const fs::path& dir) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (!it->is_regular_file(ec) || (n != "index.json" && n != "train.tok" && n != "validation.tok")) return false;
  }
  return !ec;
}

// "<16 hex digits>": the name load_data gives an entry (a hash of its source and options).
bool entry_name(const std::string& name) {
  return name.size() == 16 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// "<key>.tmp-<pid>": a preparation in progress, or one whose process died.
bool partial_of_dead_process(const std::string& name) {
  const auto at = name.rfind(".tmp-");
  if (at == std::string::npos) return false;
  const long pid = std::strtol(name.c_str() + at + 5, nullptr, 10);
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::vector<TokenCacheEntry> list_token_cache(const std::string& cache_dir) {
  const fs::path root = cache_dir.empty() ? fs::path(default_cache_dir()) : fs::path(cache_dir);
  std::vector<TokenCacheEntry> out;
  std::vector<fs::file_time_type> when;  // full resolution, to order entries made within a second
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return out;
  std::map<std::string, size_t> newest;  // source + tokenizer + options -> index of its newest entry
  for (auto& d : fs::directory_iterator(root, ec)) {
    if (!d.is_directory()) continue;
    const std::string name = d.path().filename().string();
    TokenCacheEntry e;
    e.dir = d.path().string();
    // Only folders that are verifiably entries: the name load_data gives, only the files it writes,
    // and (when complete) an index in its format. Anything else in the folder is never touched.
    const auto tmp_at = name.find(".tmp-");
    if (!entry_name(name.substr(0, tmp_at)) || !holds_only_entry_files(d.path())) continue;
    if (tmp_at != std::string::npos) {
      if (!partial_of_dead_process(name)) continue;  // still being written by a live process
      e.partial = true;
      when.push_back(fs::last_write_time(d.path(), ec));
    } else {
      const fs::path index = d.path() / "index.json";
      std::string text;
      try {
        text = read_file_bounded(index.string(), kMaxJsonBytes, "token cache index");
      } catch (const Error&) {
        continue;  // not a cache entry: never touched
      }
      const json j = json::parse(text, nullptr, false);
      if (!j.is_object() || j.value("format", json()) != json(kTokenCacheFormat) || !j.contains("source"))
        continue;  // not a cache entry: never touched
      e.source = j.value("source", std::string());
      e.tokenizer = j.value("tokenizer_kind", std::string());
      e.source_missing = e.source.empty() || !fs::exists(e.source, ec);
      when.push_back(fs::last_write_time(index, ec));
      const std::string same = e.source + "|" + j.value("tokenizer", std::string()) + "|" + j.value("doc_bytes", json()).dump() +
                               "|" + j.value("val_every", json()).dump() + "|" + j.value("pack_tokens", json()).dump();
      const size_t i = out.size();
      auto [it, fresh] = newest.emplace(same, i);
      if (!fresh) {
        const size_t prev = it->second;
        if (when.back() > when[prev]) {
          out[prev].superseded = true;
          it->second = i;
        } else {
          e.superseded = true;
        }
      }
    }
    e.made = seconds(when.back());
    e.bytes = folder_bytes(d.path());
    out.push_back(e);
  }
  std::vector<size_t> order(out.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return when[a] > when[b]; });
  std::vector<TokenCacheEntry> sorted;
  for (size_t i : order) sorted.push_back(out[i]);
  return sorted;
}

int64_t clear_token_cache(const std::string& cache_dir, bool stale_only) {
  int64_t freed = 0;
  for (auto& e : list_token_cache(cache_dir)) {
    if (stale_only && !e.stale()) continue;
    std::error_code ec;
    fs::remove_all(e.dir, ec);
    if (ec) throw Error(e.dir + ": cannot remove: " + ec.message());
    freed += e.bytes;
  }
  return freed;
}

}  // namespace statescope
