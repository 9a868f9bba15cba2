// cmd_forward.cpp — `statescope-cli forward --model DIR --input IN.h5 --output OUT.h5`.
//
// IN.h5:  input_ids int [B, L]; optional initial_ssm_state float [n_layer, B, <the layout's ssm axes>]
//         and initial_conv_state float [n_layer, B, <conv axes>] (state_layout.h): Mamba-2
//         (nheads, headdim, d_state) and (conv_dim, d_conv-1); Mamba-1 (d_inner, d_state) and
//         (d_inner, d_conv-1), oldest conv input first.
//         A hybrid (Nemotron-H, Qwen3.5): n_layer counts its recurrent layers, and its attention
//         layers' caches may be given too: initial_keys and initial_values float [attention layers,
//         B, kv_heads, T0, head_dim] (both or neither; T0 positions already seen).
// OUT.h5: logits float32 [B, L, V]; final_ssm_state, final_conv_state (shapes as above);
//         ssm_state_norm float32 [n_layer, B, L]; ssm_state_norm_per_head float32 [n_layer, B, L, groups]
//         (Mamba-2: heads; Mamba-1: channel groups); root attributes architecture, ssm_state_axes,
//         conv_state_axes. A hybrid adds final_keys and final_values [attention layers, B, kv_heads,
//         T0 + L, head_dim] and the attributes layer_kinds (every layer's kind, in order),
//         recurrent_layers and attention_layers (the model's layer index of each state row).
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "core/model/checkpoint.h"
#include "core/model/model_registry.h"
#include "core/base/error.h"
#include "core/base/memory_budget.h"
#include "core/base/output_rule.h"
#include "core/store/h5file.h"

namespace statescope::cli {
namespace {

// Reads an optional [n_layer, ...per-layer] float dataset and checks its shape.
torch::Tensor read_state(const H5File& f, const std::string& name, const std::vector<int64_t>& want) {
  if (!f.has(name)) return {};
  std::vector<int64_t> d;
  auto v = f.read_f32(name, &d);
  if (d != want)
    throw Error(f.path() + ": dataset '" + name + "' has shape " + dims_str(d) + ", expected " + dims_str(want));
  const auto bad = std::count_if(v.begin(), v.end(), [](float x) { return !std::isfinite(x); });
  if (bad) throw Error(f.path() + ": dataset '" + name + "' holds " + std::to_string(bad) + " non-finite values (NaN or Inf)");
  return torch::from_blob(v.data(), d, torch::kFloat32).clone();
}

void write_tensor(H5File& f, const std::string& name, const torch::Tensor& t) {
  auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  f.write(name, c.data_ptr<float>(), c.sizes().vec());
}

// A hybrid's initial attention caches: initial_keys and initial_values [A, B, kv_heads, T0, head_dim]
// (both or neither), one cache per attention layer; none for a model without attention layers.
std::vector<KVCache> read_caches(const H5File& in, const StateLayout& c, int64_t B) {
  const bool k = in.has("initial_keys"), v = in.has("initial_values");
  if (!k && !v) return {};
  if (c.attention_layers == 0)
    throw Error(in.path() + ": dataset '" + std::string(k ? "initial_keys" : "initial_values") + "' given, but this " +
                c.architecture + " model has no attention layers");
  if (k != v) throw Error(in.path() + ": dataset '" + std::string(k ? "initial_values" : "initial_keys") + "' is missing (keys and values come together)");
  std::vector<int64_t> d;
  in.read_f32("initial_keys", &d);  // the shape first: T0 is the file's
  const int64_t T0 = d.size() == 5 ? d[3] : 0;
  const std::vector<int64_t> want{c.attention_layers, B, c.kv_heads, T0, c.head_dim};
  auto keys = read_state(in, "initial_keys", want), values = read_state(in, "initial_values", want);
  std::vector<KVCache> out;
  for (int64_t a = 0; a < c.attention_layers; ++a) out.push_back({keys[a], values[a]});
  return out;
}

// The final caches and the layer attributes of a hybrid (nothing for a pure recurrent model).
void write_caches(H5File& f, const StateLayout& c, const std::vector<KVCache>& caches) {
  if (c.layer_kinds.empty()) return;
  f.set_attr_strings("/", "layer_kinds", c.layer_kinds);
  std::vector<std::string> rec, att;
  for (int64_t r = 0; r < c.n_layer; ++r) rec.push_back(std::to_string(c.model_layer(r)));
  for (size_t i = 0; i < c.layer_kinds.size(); ++i)
    if (c.layer_kinds[i] == "attention") att.push_back(std::to_string(i));
  f.set_attr_strings("/", "recurrent_layers", rec);
  f.set_attr_strings("/", "attention_layers", att);
  if (caches.empty()) return;
  std::vector<torch::Tensor> k, v;
  for (auto& x : caches) k.push_back(x.keys), v.push_back(x.values);
  write_tensor(f, "final_keys", torch::stack(k));      // [A, B, kv_heads, T, head_dim]
  write_tensor(f, "final_values", torch::stack(v));
  f.set_attr("/", "cache_axes", "(attention layer, batch, kv_heads, positions, head_dim)");
}

}  // namespace

Runner add_forward(CLI::App& app) {
  struct Opts { std::string model, input, output, scan = "chunked"; int64_t chunk = 0; bool overwrite = false; };
  auto o = std::make_shared<Opts>();
  app.add_option("--model", o->model, "model directory (config.json + model.safetensors or pytorch_model.bin) or a Hugging Face id in the local cache")
      ->required();
  app.add_option("--input", o->input,
                 "HDF5 file with input_ids int [B,L]; optional initial_ssm_state float "
                 "[n_layer,B,nheads,headdim,d_state] and initial_conv_state float [n_layer,B,conv_dim,d_conv-1] "
                 "(Mamba-2; Mamba-1: [n_layer,B,d_inner,d_state] and [n_layer,B,d_inner,d_conv-1]; GLA, Gated DeltaNet: [n_layer,B,heads,head_k_dim,head_v_dim] key first and [n_layer,B,q|k|v channels,conv_size-1]; "
                 "a hybrid: n_layer counts its recurrent layers, and initial_keys and initial_values [attention layers,B,kv_heads,T0,head_dim] may be given; `info` shows the layout)")
      ->required();
  app.add_option("--output", o->output,
                 "HDF5 file to write: logits [B,L,V], final_ssm_state, final_conv_state, "
                 "ssm_state_norm [n_layer,B,L], ssm_state_norm_per_head [n_layer,B,L,nheads]; a hybrid also final_keys and final_values")
      ->required();
  app.add_flag("--overwrite", o->overwrite, "replace an existing output file (never the input)");
  app.add_option("--scan", o->scan, "scan implementation (fused: the CUDA kernel on a GPU, chunked elsewhere)")->check(CLI::IsMember({"chunked", "sequential", "fused"}));
  app.add_option("--chunk-size", o->chunk, "chunk length for the chunked scan (default: the config's)");
  return [o]() {
    // The output rule before any work (core/base/output_rule.h): new, or --overwrite; never an input.
    StagedOutput staged(o->output, OutputRule{o->overwrite, {o->input, o->model}, false});
    auto model = load_model_dir(resolve_model(o->model), default_compute());
    model->eval();
    const StateLayout& c = model->state_layout();
    const int64_t width = d_model(model->model_config());
    H5File in(o->input, H5File::Mode::Read);
    if (!in.has("input_ids")) throw Error(o->input + ": dataset 'input_ids' not found");
    if (!in.is_integer("input_ids")) throw Error(o->input + ": dataset 'input_ids' must be integer");
    std::vector<int64_t> d;
    auto ids = in.read_i64("input_ids", &d);
    if (d.size() != 2) throw Error(o->input + ": dataset 'input_ids' must be [B, L], got " + dims_str(d));
    auto tokens = torch::from_blob(ids.data(), d, torch::kInt64).clone();  // [B, L]
    model->check_tokens(tokens, o->input + ": dataset 'input_ids'");
    const int64_t B = d[0], L = d[1];
    {  // what the pass holds at once, budgeted before anything is allocated: logits [B, L, V] with the
       // activations of a layer (about 8 x d_inner per token) and the norms, in float32
      const uint64_t tokens = mul_sat(static_cast<uint64_t>(B), static_cast<uint64_t>(L));
      const uint64_t per_token = static_cast<uint64_t>(model->vocab_size()) + 16 * static_cast<uint64_t>(width) +
                                 static_cast<uint64_t>(c.n_layer) * (1 + static_cast<uint64_t>(c.groups));
      check_memory_budget(mul_sat(mul_sat(tokens, per_token), 4),
                          o->input + ": dataset 'input_ids' [" + std::to_string(B) + ", " + std::to_string(L) + "]");
    }

    // (layer, batch, layout.ssm...) and (layer, batch, layout.conv...): Mamba-2 (heads, headdim, d_state)
    // and (conv_dim, d_conv-1); Mamba-1 (d_inner, d_state) and (d_inner, d_conv-1).
    auto with_layers = [&](std::vector<int64_t> s) {
      s.insert(s.begin(), c.n_layer);
      return s;
    };
    auto ssm0 = read_state(in, "initial_ssm_state", with_layers(c.ssm_shape(B)));
    // GLA without short convolutions has no conv state: a file that holds one is refused by name.
    if (c.conv.empty() && in.has("initial_conv_state"))
      throw Error(o->input + ": dataset 'initial_conv_state' given, but this " + c.architecture +
                  " model has no conv state (no short convolutions)");
    auto conv0 = c.conv.empty() ? torch::Tensor() : read_state(in, "initial_conv_state", with_layers(c.conv_shape(B)));
    ModelState init;
    const bool has_recurrent = ssm0.defined() || conv0.defined();
    for (int64_t i = 0; has_recurrent && i < c.n_layer; ++i)
      init.push_back({ssm0.defined() ? ssm0[i] : torch::Tensor(), conv0.defined() ? conv0[i] : torch::Tensor()});
    init.attention = read_caches(in, c, B);
    const bool has_init = has_recurrent || !init.attention.empty();

    torch::NoGradGuard ng;
    ForwardOptions fo;
    fo.scan = o->scan == "sequential" ? ScanImpl::Sequential : o->scan == "fused" ? ScanImpl::Fused : ScanImpl::Chunked;
    fo.chunk_size = o->chunk;
    fo.state_norms = true;
    auto out = model->forward(tokens, has_init ? &init : nullptr, fo);

    std::vector<torch::Tensor> ssm, conv;
    for (auto& s : out.final_state) { ssm.push_back(s.ssm); conv.push_back(s.conv); }
    H5File f(staged.staging(), H5File::Mode::Create);
    write_tensor(f, "logits", out.logits);
    write_tensor(f, "final_ssm_state", torch::stack(ssm));
    if (!c.conv.empty()) write_tensor(f, "final_conv_state", torch::stack(conv));
    write_caches(f, c, out.final_state.attention);
    write_tensor(f, "ssm_state_norm", out.norm);
    write_tensor(f, "ssm_state_norm_per_head", out.norm_per_head);
    f.set_attr("/", "creator", "statescope-cli forward");
    f.set_attr("/", "model", o->model);
    f.set_attr("/", "scan", o->scan);
    f.set_attr("/", "architecture", c.architecture);
    f.set_attr("/", "ssm_state_axes", "(layer, batch, " + c.ssm_axes().substr(1));
    if (!c.conv.empty()) f.set_attr("/", "conv_state_axes", "(layer, batch, " + c.conv_axes().substr(1));
    f.close();
    staged.finish(StagedOutput::Outcome::Replace);
    // Finite weights and states can still overflow: said, naming the tensor, with a failing exit
    // (the file is written, so the values can be looked at).
    const int64_t bad_logits = (~torch::isfinite(out.logits)).sum().item<int64_t>();
    if (bad_logits) {
      std::cerr << "error: " << o->output << ": dataset 'logits' holds " << bad_logits
                << " non-finite values (NaN or Inf): the forward pass overflowed\n";
      return 1;
    }
    std::cout << "forward: " << B << " x " << L << " tokens, " << c.n_layer << (c.layer_kinds.empty() ? "" : " recurrent")
              << " layers -> " << o->output
              << " (mean final-token state norm per layer:";
    if (L > 0) {
      auto last = out.norm.select(2, L - 1).mean(1);  // [n_layer]
      for (int64_t i = 0; i < c.n_layer; ++i) std::cout << " " << last[i].item<float>();
    }
    std::cout << ")\n";
    return 0;
  };
}

}  // namespace statescope::cli
