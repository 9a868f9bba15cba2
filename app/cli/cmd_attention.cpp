// cmd_attention.cpp — `statescope-cli attention --model M [--data D | --text TEXT] --length L
// --layer l [--head h] -o OUT.h5`: a sequence's effective-attention matrices (core/analyses/attention/).
//
// OUT.h5: tokens int64 [L] (the sequence, the model's ids); M float64 [heads, L, L] (M[t, s]: how much
//         position t reads position s; zero above the diagonal); init float64 [heads, L] (what is left
//         of the initial state at t); by_distance float64 [heads, L] (mean |M[t, t-d]| per distance d);
//         root attributes model, layer, heads, command, source. A hybrid's --layer is its model layer:
//         an attention layer's M is its softmax (layer_kind "attention", init 0), a Mamba-2 layer's its
//         effective attention (layer_kind "mamba2").
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "app/cli/interrupt.h"
#include "app/cli/progress.h"
#include "core/analyses/attention/attention.h"
#include "core/base/error.h"
#include "core/base/output_rule.h"
#include "core/data/dataset.h"
#include "core/data/tokenizer.h"
#include "core/model/checkpoint.h"
#include "core/model/model_registry.h"
#include "core/store/h5file.h"

namespace statescope::cli {

Runner add_attention(CLI::App& app, const std::string& command) {
  struct O {
    std::string model = "embedded", data = "embedded", text, output;
    int64_t length = 256, layer = 0, head = -1;
    bool overwrite = false;
  };
  auto o = std::make_shared<O>();
  app.add_option("--model", o->model, "model directory, 'embedded', or a Hugging Face id in the local cache")
      ->capture_default_str();
  auto* data = app.add_option("--data", o->data, "corpus whose first validation document is read (see 'data')")
                   ->capture_default_str();
  app.add_option("--text", o->text, "or: this text, in the model's tokens")->excludes(data);
  app.add_option("--length", o->length, "tokens of the sequence (M exact up to 4096; longer, to 65536, log-binned: "
                                        "dataset positions holds each bin's first position)")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, kMaxBinnedAttentionLength));
  app.add_option("--layer", o->layer, "layer (a hybrid: its model layer, attention or Mamba-2)")->capture_default_str()->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  app.add_option("--head", o->head, "one head (default: every head of the layer)")->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  app.add_option("-o,--output", o->output, "HDF5 file to write")->required();
  app.add_flag("--overwrite", o->overwrite, "replace an existing output file");
  return [o, command]() {
    const std::string dir = resolve_model(o->model);
    // The model folder and a corpus read from disk are inputs: -o may be neither (nor inside the model).
    const std::string data = o->text.empty() && o->data != "embedded" ? resolve_data_source(o->data) : std::string();
    StagedOutput staged(o->output, OutputRule{o->overwrite, {dir, data}, false});
    auto model = load_model_dir(dir, default_compute());
    model->eval();
    std::vector<int32_t> ids;
    std::string source;
    if (!o->text.empty()) {
      ids = load_tokenizer(dir)->encode(o->text);
      if (static_cast<int64_t>(ids.size()) > o->length) ids.resize(static_cast<size_t>(o->length));
      source = "text";
    } else {
      ids = leading_tokens(load_corpus(o->data, dir, model->vocab_size()).validation, o->length);
      source = o->data + " (validation, from its first document)";
    }
    // Progress per block of M's rows (step, rate, ETA); SIGINT/SIGTERM stop it within a block.
    ProgressLine line;
    const auto t0 = std::chrono::steady_clock::now();
    const AttentionResult a = attention_result(model, ids, o->layer, o->head, [&](int64_t done, int64_t total) {
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double rate = el > 0 ? double(done) / el : 0;
      char buf[160];
      std::snprintf(buf, sizeof buf, "attention: block %lld/%lld  %.1f blocks/s  ETA %s", (long long)done, (long long)total,
                    rate, fmt_eta(rate > 0 ? double(total - done) / rate : -1).c_str());
      line.update(buf, done == total);
      return !interrupted();
    });
    line.done();
    const int64_t L = a.length, nh = static_cast<int64_t>(a.heads.size()), B = a.bins();
    H5File f(staged.staging(), H5File::Mode::Create);
    std::vector<int64_t> tok(a.tokens.begin(), a.tokens.end());
    f.write("tokens", tok.data(), {L});
    f.write("positions", a.positions.data(), {B});
    f.write("M", a.M.data(), {nh, B, B});
    f.write("init", a.init.data(), {nh, B});
    f.write("by_distance", a.by_distance.data(), {nh, L});
    f.set_attr("/", "creator", "statescope-cli attention");
    f.set_attr("/", "command", command);
    f.set_attr("/", "model", o->model);
    f.set_attr("/", "source", source);
    f.set_attr_i64("/", "layer", o->layer);
    if (!a.layer_kind.empty()) f.set_attr("/", "layer_kind", a.layer_kind);  // a hybrid's model layer: its kind
    f.set_attr_i64("/", "binned", a.binned() ? 1 : 0);
    std::string hs;
    for (int64_t h : a.heads) hs += (hs.empty() ? "" : ",") + std::to_string(h);
    f.set_attr("/", "heads", hs);
    f.close();
    staged.finish(StagedOutput::Outcome::Replace);
    std::cout << "attention: layer " << o->layer << (a.layer_kind.empty() ? "" : " (" + a.layer_kind + ")") << ", " << nh << (nh == 1 ? " head, " : " heads, ") << L
              << " tokens" << (a.binned() ? " (M in " + std::to_string(B) + " log-spaced bins)" : std::string()) << " -> "
              << o->output << "\n  mean |M| at distance 1, 8, 64:";
    for (int64_t i = 0; i < nh; ++i) {
      std::cout << "\n    head " << a.heads[static_cast<size_t>(i)];
      for (int64_t d : {1, 8, 64})
        if (d < L) std::cout << "  " << a.by_distance[static_cast<size_t>(i * L + d)];
    }
    std::cout << "\n";
    return 0;
  };
}

}  // namespace statescope::cli
