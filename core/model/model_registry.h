// model_registry.h — where models live and what statescope records about the ones it trained.
//
// "embedded" names the tiny byte-level model committed in data/models/embedded. A model directory
// that statescope trained also holds statescope.json: the training context T, whether A was
// frozen, the seed and the exact command that made it. No LibTorch.
#pragma once
#include <cstdint>
#include <string>

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
// (data/models/retrieval); anything else must be an existing directory.
std::string resolve_model(const std::string& name_or_dir);

ModelRecord read_model_record(const std::string& dir);  // defaults when statescope.json is absent
void write_model_record(const std::string& dir, const ModelRecord& r);

// FNV-1a 64 of the directory's weights file, as 16 hex digits (identifies a checkpoint in results).
std::string weights_hash(const std::string& dir);

}  // namespace statescope
