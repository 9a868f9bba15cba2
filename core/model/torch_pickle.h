// torch_pickle.h — reads the state dict of a PyTorch checkpoint file (torch.save zip archive) with
// the semantics of torch.load(weights_only=True): only what state dicts hold is understood — dict
// and collections.OrderedDict (its _metadata is accepted and ignored), _rebuild_tensor_v2,
// _rebuild_parameter, the typed storages of every float, integer and bool dtype, shared storages,
// views with offsets and strides — and any other pickle global is refused by name. Nothing in the
// file is executed. Every size is checked against the archive before memory is used, nesting is
// bounded, and every error names the file.
//
// Why our own reader: LibTorch's torch::pickle_load maps collections.OrderedDict to None, so every
// file written by torch.save(module.state_dict()) — every official mamba_ssm checkpoint — failed.
#pragma once
#include <functional>
#include <map>
#include <string>

#include <torch/types.h>

namespace statescope {

// name -> tensor (CPU, contiguous, dtype as stored). Throws Error naming `path` and what is wrong.
std::map<std::string, torch::Tensor> read_torch_state_dict(const std::string& path);

// The same from the bytes of data.pkl and a storage reader (for tests and fuzzing): storage(key,
// bytes) returns the size of record data/<key> and, when `bytes` is non-null, copies it there.
using StorageReader = std::function<size_t(const std::string& key, void* bytes)>;
std::map<std::string, torch::Tensor> parse_state_dict_pickle(const std::string& pickle, const StorageReader& storage,
                                                             const std::string& source);

}  // namespace statescope
