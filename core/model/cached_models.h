// cached_models.h — the recurrent models statescope can open from the local Hugging Face cache, with
// their architecture and size, for the app's model picker and `statescope-cli models`. Reads only
// config.json and file sizes (no weights). No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

struct CachedModel {
  std::string id;            // what --model takes: "state-spaces/mamba2-130m", or "owner/name@ref" off main
  std::string commit;        // the snapshot's commit hash
  std::string dir;           // the snapshot folder
  std::string architecture;  // "Mamba-2", "Mamba-1"
  int64_t parameters = 0;    // from config.json
  int64_t n_layer = 0, d_model = 0;
  uint64_t weight_bytes = 0; // on disk
};

// Every cached snapshot that a ref names (main first, then other branches and tags; a snapshot no ref
// names is listed by its commit) whose config.json statescope reads and whose weights are there. Models of other architectures are
// left out; `skipped`, when given, gets one line per repository left out and why.
std::vector<CachedModel> list_cached_models(std::vector<std::string>* skipped = nullptr);

// "state-spaces/mamba2-130m  Mamba-2  24 layers x 768  129.1M parameters  516 MB"
std::string describe_cached_model(const CachedModel& m);

}  // namespace statescope
