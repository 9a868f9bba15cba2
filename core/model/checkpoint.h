// checkpoint.h — loading and saving model directories (config.json + weights).
//
// Reads: Hugging Face layout (model.safetensors, or shards with model.safetensors.index.json; the
// older pytorch_model.bin, or its shards with pytorch_model.bin.index.json) and mamba_ssm layout
// (pytorch_model.bin written by torch.save(model.state_dict()); read by torch_pickle.h, weights
// only). Any float dtype (fp32, fp16, bf16) is read into the model's fp32. Both naming schemes for
// the embedding (backbone.embedding.weight / backbone.embeddings.weight); tied or untied lm_head.
// Writes: model.safetensors + config.json (Hugging Face layout, loadable by transformers).
#pragma once
#include <map>
#include <string>

#include "core/compute/runtime.h"  // Compute
#include "core/model/recurrent_lm.h"

namespace statescope {

// Reads every tensor of a .safetensors or torch .bin file (CPU, dtype as stored).
StateDict read_weights_file(const std::string& path);

// Copies `sd` into `model` (any architecture), renaming mamba_ssm keys to HF keys; every parameter
// must be present with its exact shape. `source` names the file in errors. Returns the keys that were
// not used.
std::vector<std::string> load_state_dict(RecurrentLMImpl& model, const StateDict& sd, const std::string& source);

// Moves the model to `compute`'s device and gives it its precision and scan (the model keeps them:
// training and the analyses read them from it). The process default is default_compute() (runtime.h):
// every caller says which it means.
void place_model(RecurrentLM& model, const Compute& compute);

// A deep copy of `model`: same config, weights and buffers (copied, not shared), device, precision
// and scan. Fine-tuning the copy leaves `model` as it was.
RecurrentLM copy_model(RecurrentLM& model);

// Loads a model directory of any architecture (config.json decides which), placed with place_model.
// Throws Error naming the file and the field or tensor at fault.
RecurrentLM load_model_dir(const std::string& dir, const Compute& compute);

// Writes config.json and model.safetensors (float32 unless the model is in another float dtype).
void save_model_dir(RecurrentLM& model, const std::string& dir,
                    const std::map<std::string, std::string>& metadata = {});

}  // namespace statescope
