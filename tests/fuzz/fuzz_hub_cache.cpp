// fuzz_hub_cache.cpp — Hugging Face cache layouts (core/base/hub_cache.h, contained.h): the input
// builds a cache in a scratch folder, one entry per line, then every id it names is resolved and the
// cache listed. The rule: each call returns or throws statescope::Error, and every folder it returns
// lies inside the cache once its links are resolved. Links may point anywhere, "/" included: a walk
// that left the cache would be a timeout or a trap, a finding either way.
//
// Lines: "d PATH" a folder, "f PATH\tTEXT" a file, "l PATH\tTARGET" a link, "q ID" an id to resolve
// (a model; "Q ID" a dataset). PATH is relative to the cache (".." and leading '/' dropped).
// Seeds: tests/fuzz/seeds/fuzz_hub_cache/*.txt (a huggingface_hub layout and hostile variants).
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/contained.h"
#include "core/base/error.h"
#include "core/base/hub_cache.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;
using namespace statescope;

namespace {

// PATH made relative and free of "..": every entry is created inside the cache.
fs::path inside(const std::string& p) {
  fs::path out;
  for (const auto& part : fs::path(p))
    if (part != ".." && part != "." && part != "/" && !part.empty()) out /= part;
  return out;
}

void check_within(const std::string& dir, const fs::path& cache) {
  if (!path_within(resolved(dir), resolved(cache))) __builtin_trap();  // a folder outside the cache was returned
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  const fs::path cache = fuzz::scratch() / "hub";
  std::error_code ec;
  fs::remove_all(cache, ec);
  fs::create_directories(cache, ec);
  ::setenv("HF_HUB_CACHE", cache.c_str(), 1);
  std::vector<std::pair<std::string, HubRepoType>> ids;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  int entries = 0;
  for (std::string line; std::getline(in, line) && entries < 200; ++entries) {
    if (line.size() < 3 || line[1] != ' ') continue;
    const std::string rest = line.substr(2);
    const auto tab = rest.find('\t');
    const fs::path p = cache / inside(rest.substr(0, tab));
    const std::string arg = tab == std::string::npos ? "" : rest.substr(tab + 1);
    switch (line[0]) {
      case 'd': fs::create_directories(p, ec); break;
      case 'f':
        fs::create_directories(p.parent_path(), ec);
        std::ofstream(p, std::ios::binary) << arg;
        break;
      case 'l':
        fs::create_directories(p.parent_path(), ec);
        if (!arg.empty()) fs::create_symlink(arg, p, ec);
        break;
      case 'q': ids.emplace_back(rest, HubRepoType::Model); break;
      case 'Q': ids.emplace_back(rest, HubRepoType::Dataset); break;
      default: break;
    }
  }
  for (const auto& [id, type] : ids) {
    try {
      const HubSnapshot s = resolve_hub_snapshot(id, type);
      check_within(s.dir, cache);
    } catch (const Error&) {
    }
  }
  for (HubRepoType type : {HubRepoType::Model, HubRepoType::Dataset}) {
    for (const auto& [id, repo] : list_hub_repos(type)) {
      check_within(repo, cache);
      for (const auto& [ref, commit] : hub_refs(repo)) (void)ref, (void)commit;
      for (const auto& name : hub_snapshot_names(repo)) {
        try {
          check_hub_snapshot(repo, repo + "/snapshots/" + name);
        } catch (const Error&) {
        }
      }
    }
  }
  return 0;
}
