// model_registry.cpp — model directory bookkeeping.
#include "core/model/model_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/base/contained.h"
#include "core/base/error.h"
#include "core/base/paths.h"
#include "core/base/file_io.h"
#include "core/base/hub_cache.h"

namespace statescope {
namespace fs = std::filesystem;

const std::vector<std::string>& committed_models() {
  static const std::vector<std::string> names{"embedded", "embedded-mamba1", "embedded-gla", "embedded-gdn", "retrieval"};
  return names;
}

std::string committed_model_list() {
  std::string s;
  for (const auto& n : committed_models()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string resolve_model(const std::string& name) {
  const auto& known = committed_models();
  const bool named = std::find(known.begin(), known.end(), name) != known.end();
  const std::string dir = named ? data_dir() + "/models/" + name : name;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return dir;
  if (named) throw Error(dir + ": model directory not found (the " + name + " model; " + data_dir_searched() + ")");
  if (is_hub_id(name)) return hub_model_snapshot(name).dir;
  throw Error(dir + ": model directory not found (a model is a directory with config.json, one of " +
              committed_model_list() + ", or a Hugging Face id such as state-spaces/mamba2-130m in the local cache)");
}

HubSnapshot hub_model_snapshot(const std::string& id) {
  HubSnapshot s = resolve_hub_snapshot(id, HubRepoType::Model);
  const fs::path dir(s.dir);
  const std::string what = s.id + "@" + s.revision + " (" + s.dir + ")";
  std::error_code ec;
  const bool config = fs::exists(dir / "config.json", ec);
  if (permission_denied(ec)) throw Error((dir / "config.json").string() + ": permission denied (" + what + ")");
  if (!config)
    throw Error(what + ": the cached snapshot has no config.json (an interrupted download, or not a model); "
                "download it again with `huggingface-cli download " + s.id + "`");
  bool weights = false;
  for (const char* f : {"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json"})
    weights = weights || fs::exists(dir / f, ec);  // exists() follows the blob symlink: a dangling one is missing
  if (!weights)
    throw Error(what + ": the cached snapshot has no weights (model.safetensors or pytorch_model.bin; an interrupted "
                "download?); download it again with `huggingface-cli download " + s.id + "`");
  return s;
}

ModelRecord read_model_record(const std::string& dir) {
  ModelRecord r;
  const auto path = fs::path(dir) / "statescope.json";
  if (!fs::exists(path)) return r;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file_bounded(path.string(), kMaxJsonBytes, "statescope.json"));
    r.T = j.value("T", int64_t{0});
    r.freeze_A_log = j.value("freeze_A_log", false);
    r.seed = j.value("seed", uint64_t{0});
    r.command = j.value("command", std::string());
    r.tokenizer = j.value("tokenizer", std::string("bytes"));
    r.notes = j.value("notes", std::string());
  } catch (const std::exception& e) {
    throw Error(path.string() + ": not a valid statescope record (" + e.what() + ")");
  }
  return r;
}

void write_model_record(const std::string& dir, const ModelRecord& r) {
  nlohmann::json j{{"T", r.T}, {"freeze_A_log", r.freeze_A_log}, {"seed", r.seed}, {"command", r.command},
                   {"tokenizer", r.tokenizer}, {"notes", r.notes}};
  FileWriter out((fs::path(dir) / "statescope.json").string());
  out.write(j.dump(2) + "\n");
  out.close();
}

std::string weights_hash(const std::string& dir) {
  fs::path p;
  for (const char* f : {"model.safetensors", "pytorch_model.bin", "model.safetensors.index.json"})
    if (fs::exists(fs::path(dir) / f)) {
      p = fs::path(dir) / f;
      break;
    }
  if (p.empty()) return "";
  require_regular_file(p.string(), "weights");
  std::ifstream in(p, std::ios::binary);
  uint64_t h = 1469598103934665603ULL;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 1099511628211ULL;
    }
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace statescope
