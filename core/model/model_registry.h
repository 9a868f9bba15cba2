// model_registry.h — where models live and what statescope records about the ones it trained.
//
// "embedded" names the tiny byte-level model committed in data/models/embedded. A model directory
// that statescope trained also holds statescope.json: the training context T, whether A was
// frozen, the seed and the exact command that made it. No LibTorch.
#pragma once
#include <cstdint>
#include <string>

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

// "embedded" -> the committed demo model (Mamba-2), "embedded-mamba1" -> its Mamba-1 sibling
// (data/models/embedded-mamba1), "retrieval" -> the committed passkey-retrieval model
// (data/models/retrieval); an existing directory is itself; otherwise a Hugging Face id
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
