// cached_models.cpp — listing the Mamba-family models in the Hugging Face cache.
#include "core/model/cached_models.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/base/contained.h"
#include "core/base/error.h"
#include "core/base/hub_cache.h"
#include "core/base/names.h"
#include "core/model/model_config.h"

namespace statescope {
namespace fs = std::filesystem;

namespace {

uint64_t weight_bytes(const fs::path& dir) {
  uint64_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool weights = name.ends_with(".safetensors") || name.ends_with(".bin");
    if (!weights) continue;
    const auto size = fs::file_size(e.path(), ec);  // follows the blob symlink
    if (!ec) n += size;
  }
  return n;
}

std::string human(double v, const char* const* units) {
  int u = 0;
  while (v >= 1000 && units[u + 1]) v /= 1000, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.1f%s", v, units[u]);
  return buf;
}

}  // namespace

std::vector<CachedModel> list_cached_models(std::vector<std::string>* skipped) {
  std::vector<CachedModel> out;
  for (const auto& [id, repo] : list_hub_repos(HubRepoType::Model)) {
    // (label, commit): main first, then the other refs, then snapshots no ref names.
    std::vector<std::pair<std::string, std::string>> revs;
    std::set<std::string> named;
    auto refs = hub_refs(repo);
    std::stable_partition(refs.begin(), refs.end(), [](const auto& r) { return r.first == "main"; });
    for (const auto& [ref, commit] : refs) {
      revs.emplace_back(ref == "main" ? id : id + "@" + ref, commit);
      named.insert(commit);
    }
    std::error_code ec;
    std::vector<std::string> loose;
    for (const auto& name : hub_snapshot_names(repo))
      if (!named.count(name)) loose.push_back(name);
    for (const auto& c : loose) revs.emplace_back(id + "@" + c.substr(0, 12), c);
    for (const auto& [label, commit] : revs) {
      const fs::path dir = fs::path(repo) / "snapshots" / commit;
      try {
        if (!is_hub_id(label)) throw Error("not a revision name (letters, digits and punctuation; no control characters)");
        check_hub_snapshot(repo, dir.string());  // nothing read through a link out of the repository
        const bool config = fs::exists(dir / "config.json", ec);
        if (permission_denied(ec)) throw Error((dir / "config.json").string() + ": permission denied");
        if (!config) throw Error("no config.json");
        const ModelConfig c = load_model_config((dir / "config.json").string());
        CachedModel m;
        m.id = label;
        m.commit = commit;
        m.dir = dir.string();
        m.architecture = architecture_title(c);
        m.parameters = parameter_count(c);
        m.n_layer = n_layer(c);
        m.d_model = d_model(c);
        m.weight_bytes = weight_bytes(dir);
        if (m.weight_bytes == 0) throw Error("no weights in snapshot " + commit.substr(0, 12) + " (an interrupted download?)");
        out.push_back(std::move(m));
      } catch (const std::exception& e) {
        if (skipped) skipped->push_back(escaped(label) + ": " + escaped(e.what()));
      }
    }
  }
  return out;
}

std::string describe_cached_model(const CachedModel& m) {
  static const char* const counts[] = {"", "k", "M", "B", nullptr};
  static const char* const bytes[] = {" B", " kB", " MB", " GB", " TB", nullptr};
  return m.id + "  " + m.architecture + "  " + std::to_string(m.n_layer) + " layers x " + std::to_string(m.d_model) + "  " +
         human(static_cast<double>(m.parameters), counts) + " parameters  " + human(static_cast<double>(m.weight_bytes), bytes);
}

}  // namespace statescope
