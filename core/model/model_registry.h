// model_registry.h — where models live and what statescope records about the ones it trained.
//
// "embedded" names the tiny byte-level model committed in data/models/embedded. A model directory
// that statescope trained also holds statescope.json: the training context T, whether A was
// frozen, the seed and the exact command that made it. No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/hub_cache.h"  // HubSnapshot
#include "core/base/paths.h"  // data_dir()

namespace statescope {

struct ModelRecord {
  int64_t T = 0;               // training context (0: unknown)
  bool freeze_A_log = false;   // A was kept fixed during pretraining
  uint64_t seed = 0;
  std::string command;         // how to regenerate it
  std::string tokenizer = "bytes";
  std::string notes;
};

// The models committed in data/models that a name alone selects, as menus list them: "embedded" (the
// demo's Mamba-2), its siblings trained the same way "embedded-mamba1" (Mamba-1), "embedded-gla"
// (GLA) and "embedded-gdn" (Gated DeltaNet), and "retrieval" (a Mamba-2 fine-tuned for passkeys).
const std::vector<std::string>& committed_models();
// The committed models' names joined with ", " (for messages).
std::string committed_model_list();

// A committed model's name -> data/models/<name>; an existing directory is itself; otherwise a Hugging Face id
// ("state-spaces/mamba2-130m", "owner/name@revision") names its snapshot in the local cache
// (hub_cache.h). Throws Error saying where it looked.
std::string resolve_model(const std::string& name_or_id_or_dir);

// A Hugging Face model id resolved in the local cache, checked to hold config.json and weights.
HubSnapshot hub_model_snapshot(const std::string& id_at_revision);

ModelRecord read_model_record(const std::string& dir);  // defaults when statescope.json is absent
void write_model_record(const std::string& dir, const ModelRecord& r);

// FNV-1a 64 of the directory's weights file, as 16 hex digits (identifies a checkpoint in results).
std::string weights_hash(const std::string& dir);

}  // namespace statescope
