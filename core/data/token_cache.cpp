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
    if (name.find(".tmp-") != std::string::npos) {
      if (!partial_of_dead_process(name)) continue;  // still being written by a live process
      e.partial = true;
      when.push_back(fs::last_write_time(d.path(), ec));
    } else {
      const fs::path index = d.path() / "index.json";
      std::ifstream in(index);
      const json j = in ? json::parse(in, nullptr, false) : json();
      if (!j.is_object() || !j.contains("source")) continue;  // not a cache entry: never touched
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
