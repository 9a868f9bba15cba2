// checkpoint.cpp — model directory I/O on top of safetensors.cpp and torch_pickle.cpp.
#include "core/model/checkpoint.h"

#include <torch/serialize.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "core/base/contained.h"
#include "core/base/error.h"
#include "core/compute/runtime.h"
#include "core/model/mamba2/fused_scan.h"  // fused_kernels_built
#include "core/model/model_factory.h"
#include "core/model/safetensors.h"
#include "core/model/tensor_text.h"
#include "core/model/torch_pickle.h"
#include "core/base/file_io.h"

namespace statescope {
namespace fs = std::filesystem;
namespace {

torch::Dtype to_torch(DType d) {
  switch (d) {
    case DType::F32: return torch::kFloat32;
    case DType::F16: return torch::kFloat16;
    case DType::BF16: return torch::kBFloat16;
    case DType::F64: return torch::kFloat64;
    case DType::I64: return torch::kInt64;
    case DType::I32: return torch::kInt32;
  }
  return torch::kFloat32;
}

DType from_torch(torch::Dtype d, const std::string& name) {
  switch (d) {
    case torch::kFloat32: return DType::F32;
    case torch::kFloat16: return DType::F16;
    case torch::kBFloat16: return DType::BF16;
    case torch::kFloat64: return DType::F64;
    case torch::kInt64: return DType::I64;
    case torch::kInt32: return DType::I32;
    default: throw Error("cannot write tensor '" + name + "': unsupported dtype");
  }
}

StateDict read_safetensors_dict(const std::string& path) {
  SafetensorsFile f = read_safetensors(path);
  StateDict sd;
  for (auto& [name, r] : f.tensors) {
    auto t = torch::empty(r.shape, torch::TensorOptions().dtype(to_torch(r.dtype)));
    std::memcpy(t.data_ptr(), f.bytes(r), r.end - r.begin);
    sd.emplace(name, t);
  }
  return sd;
}

// The shards named by a Hugging Face index file (model.safetensors.index.json or
// pytorch_model.bin.index.json): every tensor from the shard the weight_map names. Shard names must
// be plain file names in the model folder (no path: an index cannot point outside its folder).
StateDict read_sharded(const std::string& dir, const std::string& index_path) {
  const std::string text = read_file_bounded(index_path, kMaxJsonBytes, "shard index");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception&) {
    throw Error(index_path + ": not valid JSON");
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw Error(index_path + ": field 'weight_map' is missing");
  std::map<std::string, std::set<std::string>> shards;  // shard file -> tensor names it must hold
  for (auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string()) throw Error(index_path + ": field 'weight_map." + name + "' is not a file name");
    const std::string f = file.get<std::string>();
    if (f.empty() || f.find('/') != std::string::npos || f.find('\\') != std::string::npos || f == "." || f == "..")
      throw Error(index_path + ": shard '" + f + "' (tensor '" + name + "') is not a file name in the model folder");
    shards[f].insert(name);
  }
  StateDict sd;
  for (auto& [f, names] : shards) {
    const std::string shard = (fs::path(dir) / f).string();
    auto part = read_weights_file(shard);
    for (auto& n : names)
      if (!part.count(n)) throw Error(shard + ": tensor '" + n + "' is missing (the index says it is here)");
    for (auto& [k, v] : part)
      if (names.count(k) && !sd.emplace(k, v).second) throw Error(shard + ": tensor '" + k + "' appears in two shards");
  }
  return sd;
}


}  // namespace

StateDict read_weights_file(const std::string& path) {
  if (!fs::exists(path)) throw Error(path + ": file not found");
  const auto ext = fs::path(path).extension().string();
  if (ext == ".safetensors") return read_safetensors_dict(path);
  if (ext == ".bin" || ext == ".pt" || ext == ".pth") return read_torch_state_dict(path);
  throw Error(path + ": unknown weights format (expected .safetensors or .bin)");
}

std::vector<std::string> load_state_dict(RecurrentLMImpl& model, const StateDict& sd_in, const std::string& source) {
  StateDict renamed;
  for (auto& [k, v] : sd_in) {
    std::string key = k;
    if (key == "backbone.embedding.weight") key = "backbone.embeddings.weight";  // mamba_ssm name
    renamed[key] = v;
  }
  const StateDict sd = model.from_checkpoint(std::move(renamed), source);  // the family's own names
  const bool tied = std::visit([](const auto& c) { return c.tie_embeddings; }, model.model_config());
  std::set<std::string> used;
  torch::NoGradGuard ng;
  // Parameters and buffers (a router's score correction bias) alike: every one must be in the file.
  auto tensors = model.named_parameters();
  for (auto& b : model.named_buffers()) tensors.insert(b.key(), b.value());
  for (auto& p : tensors) {
    auto it = sd.find(p.key());
    if (it == sd.end())
      throw Error(source + ": tensor '" + p.key() + "' is missing (expected shape " + shape_str(p.value()) + ")");
    if (!it->second.sizes().equals(p.value().sizes()))
      throw Error(source + ": tensor '" + p.key() + "' has shape " + shape_str(it->second) +
                  ", expected " + shape_str(p.value()));
    if (!it->second.is_floating_point())
      throw Error(source + ": tensor '" + p.key() + "' is not floating point");
    // NaN or Inf in a weight makes every output NaN without a word; a damaged file is said here.
    if (const int64_t bad = (~torch::isfinite(it->second)).sum().item<int64_t>(); bad > 0) {
      const int64_t first = (~torch::isfinite(it->second.reshape({-1}))).nonzero()[0].item<int64_t>();
      throw Error(source + ": tensor '" + p.key() + "' holds " + std::to_string(bad) + " non-finite value" +
                  (bad == 1 ? "" : "s") + " (NaN or Inf; the first at flat index " + std::to_string(first) +
                  "): the checkpoint is damaged");
    }
    p.value().copy_(it->second);
    used.insert(it->first);
  }
  if (tied && sd.count("lm_head.weight")) {
    // mamba_ssm stores the tied head under a second name; it must equal the embedding.
    auto& lm = sd.at("lm_head.weight");
    if (!lm.sizes().equals(model.output_weight().sizes()) ||
        !torch::equal(lm.to(model.output_weight().scalar_type()), model.output_weight()))
      throw Error(source + ": config ties embeddings but tensor 'lm_head.weight' differs from the embedding");
    used.insert("lm_head.weight");
  }
  std::vector<std::string> unused;
  for (auto& [k, v] : sd)
    if (!used.count(k)) unused.push_back(k);
  return unused;
}

void place_model(RecurrentLM& model, const Compute& compute) {
  if (compute.fused() && compute.device.rfind("cuda", 0) == 0 && !fused_kernels_built())
    throw Error("scan 'fused' on " + compute.device +
                ": this build has no CUDA kernels (nvcc was not found at configure time); use scan 'aten'");
  model->to(torch::Device(compute.device));
  model->mixed_bf16 = compute.effective_precision() == "bf16";  // fp32 where the CPU has no bf16 units
  model->fused_scan = compute.fused();
}

RecurrentLM copy_model(RecurrentLM& model) {
  RecurrentLM out(model->make_empty());
  torch::NoGradGuard no_grad;
  // set_data keeps each tensor's own device and dtype (a model may mix them).
  auto src = model->named_parameters(), dst = out->named_parameters();
  for (const auto& kv : src) dst[kv.key()].set_data(kv.value().detach().clone());
  auto bsrc = model->named_buffers(), bdst = out->named_buffers();
  for (const auto& kv : bsrc) bdst[kv.key()].set_data(kv.value().detach().clone());
  out->mixed_bf16 = model->mixed_bf16;
  out->fused_scan = model->fused_scan;
  out->intervention = model->intervention;
  out->train(model->is_training());
  return out;
}

RecurrentLM load_model_dir(const std::string& dir, const Compute& compute) {
  if (!fs::is_directory(dir)) throw Error(dir + ": not a directory");
  const auto cfg_path = (fs::path(dir) / "config.json").string();
  std::error_code cfg_ec;
  const bool cfg_exists = fs::exists(cfg_path, cfg_ec);
  if (permission_denied(cfg_ec)) throw Error(cfg_path + ": permission denied (the model's config.json)");
  if (!cfg_exists) throw Error(cfg_path + ": config.json not found in model directory");
  const ModelConfig cfg = load_model_config(cfg_path);
  // Which weights, in the order they are looked for.
  const fs::path st = fs::path(dir) / "model.safetensors", st_index = fs::path(dir) / "model.safetensors.index.json";
  const fs::path bin = fs::path(dir) / "pytorch_model.bin", bin_index = fs::path(dir) / "pytorch_model.bin.index.json";
  fs::path source;
  for (const auto& p : {st, st_index, bin, bin_index})
    if (fs::exists(p)) {
      source = p;
      break;
    }
  if (source.empty())
    throw Error(dir + ": no weights found (model.safetensors, model.safetensors.index.json, pytorch_model.bin or "
                "pytorch_model.bin.index.json)");
  // Budget before allocation: whatever config.json claims, its weights hold at least 2 bytes (fp16/bf16)
  // per parameter, so a config bigger than every weights file in the folder together is refused here.
  uint64_t weight_bytes = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto ext = e.path().extension().string();
    if ((ext == ".safetensors" || ext == ".bin") && e.is_regular_file(ec)) weight_bytes += e.file_size(ec);
  }
  const int64_t params = parameter_count(cfg);
  if (static_cast<double>(params) * 2.0 > static_cast<double>(weight_bytes) + 65536.0)
    throw Error(cfg_path + ": describes " + std::to_string(params) + " parameters (at least " +
                std::to_string(params * 2) + " bytes of weights), but the weights files in " + dir + " hold " +
                std::to_string(weight_bytes) + " bytes");
  RecurrentLM model = make_model(cfg);
  StateDict sd;
  if (source == st || source == bin) sd = read_weights_file(source.string());
  else sd = read_sharded(dir, source.string());  // an index file (pytorch_model.bin.index.json: transformers 4)
  auto unused = load_state_dict(*model, sd, source.string());
  if (!unused.empty())
    throw Error(source.string() + ": unexpected tensor '" + unused.front() + "' (" + std::to_string(unused.size()) +
                " unused in all); is this really a " + architecture_title(cfg) + " checkpoint matching config.json?");
  place_model(model, compute);
  return model;
}

void save_model_dir(RecurrentLM& model, const std::string& dir, const std::map<std::string, std::string>& metadata) {
  fs::create_directories(dir);
  std::vector<torch::Tensor> keep;  // contiguous CPU copies, alive until written
  std::vector<TensorToWrite> ts;
  StateDict mine;
  for (auto& p : model->named_parameters()) mine[p.key()] = p.value().detach().to(torch::kCPU);
  for (auto& b : model->named_buffers()) mine[b.key()] = b.value().detach().to(torch::kCPU);
  for (auto& [name, t0] : model->to_checkpoint(std::move(mine))) {  // under the family's checkpoint names
    auto t = t0.contiguous();
    keep.push_back(t);
    ts.push_back({name, from_torch(t.scalar_type(), name), t.sizes().vec(), t.data_ptr()});
  }
  auto meta = metadata;
  meta.emplace("format", "pt");
  // A temp name of this writer's own (process and thread), so two writers of one folder never rename
  // each other's half-written file away; the last rename wins and either file is whole.
  const auto writer = std::to_string(::getpid()) + "-" +
                      std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  const auto tmp = (fs::path(dir) / ("model.safetensors.tmp-" + writer)).string();
  write_safetensors(tmp, ts, meta);
  fs::rename(tmp, fs::path(dir) / "model.safetensors");
  FileWriter c((fs::path(dir) / "config.json").string());
  c.write(to_hf_config_json(model->model_config()));
  c.close();
}

}  // namespace statescope
