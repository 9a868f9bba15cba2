// hub_cache.cpp — the Hugging Face cache layout, read offline (see hub_cache.h).
#include "core/base/hub_cache.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/base/contained.h"
#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/names.h"

namespace statescope {
namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// huggingface_hub expands "~" in these variables.
std::string expand_home(const std::string& p) {
  if (p.size() >= 1 && p[0] == '~' && (p.size() == 1 || p[1] == '/')) return env("HOME") + p.substr(1);
  return p;
}

const char* prefix(HubRepoType type) { return type == HubRepoType::Model ? "models--" : "datasets--"; }
const char* kind(HubRepoType type) { return type == HubRepoType::Model ? "model" : "dataset"; }

bool is_hex(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 96) return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  if (s.front() == '-' || s.front() == '.' || s.back() == '-' || s.back() == '.') return false;
  return s.find("--") == std::string::npos && s.find("..") == std::string::npos;
}

bool valid_revision(const std::string& r) {
  if (r.empty() || r.size() > 255 || r.front() == '/' || r.back() == '/') return false;
  if (r.find("..") != std::string::npos || r.find("//") != std::string::npos) return false;
  for (unsigned char c : r)
    if (c < 0x21 || c == 0x7f || c == '\\') return false;
  return true;
}

std::string download_hint(const std::string& id, HubRepoType type) {
  return std::string("download it with the Hugging Face tools, e.g. `huggingface-cli download ") +
         (type == HubRepoType::Dataset ? "--repo-type dataset " : "") + id +
         "` (statescope never downloads)";
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string cached_list(const std::string& repo_dir) {
  std::string out;
  for (const auto& [ref, commit] : hub_refs(repo_dir)) out += (out.empty() ? "" : ", ") + escaped(ref) + " -> " + commit.substr(0, 12);
  std::error_code ec;
  std::vector<std::string> snaps;
  for (const auto& name : hub_snapshot_names(repo_dir)) snaps.push_back(escaped(name));
  std::sort(snaps.begin(), snaps.end());
  if (!snaps.empty()) {
    out += std::string(out.empty() ? "" : "; ") + "snapshots ";
    for (size_t i = 0; i < snaps.size(); ++i) out += (i ? ", " : "") + snaps[i].substr(0, 12);
  }
  return out.empty() ? "nothing" : out;
}

// A repository's refs/ holds a few branch and tag names; a folder of thousands is not a cache's.
constexpr int64_t kMaxRefs = 10'000;
// A snapshot's files (a sharded dataset has thousands; not millions).
constexpr int64_t kMaxSnapshotEntries = 1'000'000;

// The repository folder of `folder` in the cache, refused when it leads outside the cache.
fs::path contained_repo(const HubCache& cache, const std::string& folder) {
  const fs::path repo = fs::path(cache.dir) / folder;
  require_within(repo, cache.dir, "a repository folder of the Hugging Face cache " + cache.dir);
  return repo;
}

}  // namespace

std::vector<std::string> hub_snapshot_names(const std::string& repo_dir) {
  std::vector<std::string> out;
  const fs::path snaps = fs::path(repo_dir) / "snapshots";
  std::error_code ec;
  if (!fs::is_directory(snaps, ec) || !path_within(resolved(snaps), resolved(repo_dir))) return out;
  for (auto it = fs::directory_iterator(snaps, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    out.push_back(it->path().filename().string());
    if (static_cast<int64_t>(out.size()) >= kMaxRefs) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

void check_hub_snapshot(const std::string& repo_dir, const std::string& dir) {
  const std::string what = "a snapshot of " + repo_dir + ", whose files link into its blobs/";
  require_within(dir, repo_dir, what);
  walk_within(dir, [](const fs::path&, const std::string&) {}, kMaxSnapshotEntries, repo_dir);
}

std::string hub_repo_of_snapshot(const std::string& dir) {
  // The snapshot itself or any folder inside one (".../snapshots/<commit>/data/train"): its files
  // link to the repository's blobs/, which is then the bound of a walk.
  fs::path p = fs::absolute(fs::path(dir)).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "…/snapshots/<commit>/" too
  for (; p.has_parent_path() && p != p.root_path(); p = p.parent_path()) {
    const std::string repo = p.parent_path().parent_path().filename().string();
    if (p.parent_path().filename() == "snapshots" && (repo.starts_with("models--") || repo.starts_with("datasets--")))
      return p.parent_path().parent_path().string();
  }
  return "";
}

HubCache hub_cache() {
  if (const auto v = env("HF_HUB_CACHE"); !v.empty()) return {expand_home(v), "$HF_HUB_CACHE"};
  if (const auto v = env("HUGGINGFACE_HUB_CACHE"); !v.empty()) return {expand_home(v), "$HUGGINGFACE_HUB_CACHE"};
  if (const auto v = env("HF_HOME"); !v.empty()) return {expand_home(v) + "/hub", "$HF_HOME/hub"};
  if (const auto v = env("XDG_CACHE_HOME"); !v.empty())
    return {expand_home(v) + "/huggingface/hub", "$XDG_CACHE_HOME/huggingface/hub"};
  return {env("HOME") + "/.cache/huggingface/hub", "~/.cache/huggingface/hub"};
}

bool is_hub_id(const std::string& text) {
  const auto at = text.find('@');
  const std::string id = text.substr(0, at);
  if (at != std::string::npos && !valid_revision(text.substr(at + 1))) return false;
  const auto slash = id.find('/');
  if (slash == std::string::npos || id.find('/', slash + 1) != std::string::npos) return false;
  return valid_name(id.substr(0, slash)) && valid_name(id.substr(slash + 1));
}

std::vector<std::pair<std::string, std::string>> hub_refs(const std::string& repo_dir) {
  std::vector<std::pair<std::string, std::string>> out;
  const fs::path refs = fs::path(repo_dir) / "refs";
  std::error_code ec;
  if (!fs::is_directory(refs, ec) || !path_within(resolved(refs), resolved(repo_dir))) return out;  // none, or not ours
  try {
    walk_within(refs, [&](const fs::path& p, const std::string& rel) {
      std::string commit;
      try {
        commit = trim(read_file_bounded(p.string(), 4096, "ref"));
      } catch (const Error&) {
        return;  // unreadable ref: not a cached revision
      }
      std::error_code e;
      if (!is_hex(commit) || !fs::is_directory(fs::path(repo_dir) / "snapshots" / commit, e)) return;
      out.emplace_back(rel, commit);
    }, kMaxRefs);
  } catch (const Error&) {
    // a link out of the repository, or too many entries: the refs found so far stand, no more are read
  }
  std::sort(out.begin(), out.end());
  return out;
}

HubSnapshot resolve_hub_snapshot(const std::string& text, HubRepoType type) {
  if (!is_hub_id(text))
    throw Error(text + ": not a Hugging Face " + kind(type) + " id (expected owner/name or owner/name@revision)");
  HubSnapshot s;
  const auto at = text.find('@');
  s.id = text.substr(0, at);
  s.revision = at == std::string::npos ? "main" : text.substr(at + 1);
  const HubCache cache = hub_cache();
  const std::string folder = std::string(prefix(type)) + s.id.substr(0, s.id.find('/')) + "--" + s.id.substr(s.id.find('/') + 1);
  const fs::path repo = fs::path(cache.dir) / folder;
  std::error_code ec;
  const bool is_dir = fs::is_directory(repo, ec);
  if (permission_denied(ec)) throw Error(repo.string() + ": permission denied (the " + kind(type) + " " + s.id + " in the Hugging Face cache)");
  if (is_dir) contained_repo(cache, folder);
  if (!is_dir)
    throw Error(s.id + ": no such directory, and not in the Hugging Face cache (looked for " + repo.string() +
                ", the cache chosen by " + cache.source + "; set HF_HUB_CACHE or HF_HOME to look elsewhere); " +
                download_hint(s.id, type));
  const fs::path ref = repo / "refs" / s.revision;
  const std::string cached = "a file of the cache entry " + repo.string();
  for (const char* sub : {"refs", "snapshots"})  // a folder of the entry linked elsewhere: named, never read
    if (fs::exists(repo / sub, ec)) require_within(repo / sub, repo, std::string("the ") + sub + "/ folder of " + repo.string());
  if (fs::is_regular_file(ref, ec)) {
    require_within(ref, repo, cached);
    s.commit = trim(read_file_bounded(ref.string(), 4096, "ref"));
    if (!is_hex(s.commit) || s.commit.size() > 64)  // its contents are never quoted: it may be anything
      throw Error(ref.string() + ": not a commit hash (" + std::to_string(s.commit.size()) +
                  " characters, not hexadecimal digits); the cache entry is damaged, " + download_hint(s.id, type));
    s.dir = (repo / "snapshots" / s.commit).string();
    if (!fs::is_directory(s.dir, ec))
      throw Error(s.id + "@" + s.revision + ": refs/" + s.revision + " names commit " + s.commit + " but " + s.dir +
                  " is missing (an interrupted download?); " + download_hint(s.id, type));
    check_hub_snapshot(repo.string(), s.dir);
    return s;
  }
  if (permission_denied(ec)) throw Error(ref.string() + ": permission denied");
  // A commit hash, whole or a unique prefix of at least 7 digits.
  if (is_hex(s.revision) && s.revision.size() >= 7) {
    std::vector<std::string> hits;
    for (const auto& name : hub_snapshot_names(repo.string()))
      if (name.rfind(s.revision, 0) == 0) hits.push_back(name);
    if (hits.size() == 1) {
      s.commit = hits[0];
      s.dir = (repo / "snapshots" / s.commit).string();
      check_hub_snapshot(repo.string(), s.dir);
      return s;
    }
    if (hits.size() > 1) throw Error(s.id + "@" + s.revision + ": more than one cached snapshot starts with it; give more digits");
  }
  throw Error(s.id + "@" + s.revision + ": this revision is not in the Hugging Face cache (" + repo.string() +
              " holds " + cached_list(repo.string()) + "); " + download_hint(s.id + (at == std::string::npos ? "" : " --revision " + s.revision), type));
}

std::vector<std::pair<std::string, std::string>> list_hub_repos(HubRepoType type) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string p = prefix(type);
  std::error_code ec;
  const HubCache cache = hub_cache();
  const fs::path root = resolved(cache.dir);
  int64_t seen = 0;
  for (auto it = fs::directory_iterator(cache.dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto& e = *it;
    if (++seen > 100'000) break;  // not a cache's size
    const std::string name = e.path().filename().string();
    if (name.rfind(p, 0) != 0 || !e.is_directory(ec)) continue;
    if (!path_within(resolved(e.path()), root)) continue;  // a link out of the cache: not listed, never read
    const std::string rest = name.substr(p.size());
    const auto sep = rest.find("--");
    if (sep == std::string::npos) continue;  // a legacy id without an owner ("gpt2"): not listed
    const std::string id = rest.substr(0, sep) + "/" + rest.substr(sep + 2);
    if (is_hub_id(id)) out.emplace_back(id, e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace statescope
