// cmd_attention.cpp — `statescope-cli attention --model M [--data D | --text TEXT] --length L
// --layer l [--head h] -o OUT.h5`: a sequence's effective-attention matrices (core/analyses/attention/).
//
// OUT.h5: tokens int64 [L] (the sequence, the model's ids); M float64 [heads, L, L] (M[t, s]: how much
//         position t reads position s; zero above the diagonal); init float64 [heads, L] (what is left
//         of the initial state at t); by_distance float64 [heads, L] (mean |M[t, t-d]| per distance d);
//         root attributes model, layer, heads, command, source.
#include <torch/torch.h>

#include <iostream>

#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "core/analyses/attention/attention.h"
#include "core/base/error.h"
#include "core/base/output_rule.h"
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
  app.add_option("--length", o->length, "tokens of the sequence (at most 4096: M is L x L per head)")
      ->capture_default_str()->check(CLI::Range(int64_t{1}, kMaxAttentionLength));
  app.add_option("--layer", o->layer, "layer")->capture_default_str()->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  app.add_option("--head", o->head, "one head (default: every head of the layer)")->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  app.add_option("-o,--output", o->output, "HDF5 file to write")->required();
  app.add_flag("--overwrite", o->overwrite, "replace an existing output file");
  return [o, command]() {
    StagedOutput staged(o->output, OutputRule{o->overwrite, {o->model}, false});
    const std::string dir = resolve_model(o->model);
    auto model = load_model_dir(dir);
    model->eval();
    std::vector<int32_t> ids;
    std::string source;
    if (!o->text.empty()) {
      ids = load_tokenizer(dir)->encode(o->text);
      source = "text";
    } else {
      const Corpus corpus = load_corpus(o->data, dir, model->vocab_size());
      for (const auto& d : corpus.validation) {
        for (int32_t t : d.tokens) {
          if (static_cast<int64_t>(ids.size()) >= o->length) break;
          ids.push_back(t);
        }
        if (static_cast<int64_t>(ids.size()) >= o->length) break;
      }
      source = o->data + " (validation, from its first document)";
    }
    if (static_cast<int64_t>(ids.size()) > o->length) ids.resize(static_cast<size_t>(o->length));
    if (ids.empty()) throw Error("attention: the sequence is empty");
    const int64_t L = static_cast<int64_t>(ids.size());
    auto tokens = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()), torch::kInt64).view({1, L});
    const auto& layout = model->state_layout();
    std::vector<int64_t> heads;
    if (o->head >= 0) heads.push_back(o->head);
    else
      for (int64_t h = 0; h < layout.groups; ++h) heads.push_back(h);
    std::vector<torch::Tensor> M, init, by;
    for (int64_t h : heads) {
      const auto a = effective_attention(model, tokens, o->layer, h);
      M.push_back(a.M), init.push_back(a.init), by.push_back(a.by_distance);
    }
    H5File f(staged.staging(), H5File::Mode::Create);
    auto put = [&](const std::string& name, const torch::Tensor& t) {
      auto c = t.contiguous();
      f.write(name, c.data_ptr<double>(), c.sizes().vec());
    };
    std::vector<int64_t> tok(ids.begin(), ids.end());
    f.write("tokens", tok.data(), {L});
    put("M", torch::stack(M));
    put("init", torch::stack(init));
    put("by_distance", torch::stack(by));
    f.set_attr("/", "creator", "statescope-cli attention");
    f.set_attr("/", "command", command);
    f.set_attr("/", "model", o->model);
    f.set_attr("/", "source", source);
    f.set_attr_i64("/", "layer", o->layer);
    std::string hs;
    for (int64_t h : heads) hs += (hs.empty() ? "" : ",") + std::to_string(h);
    f.set_attr("/", "heads", hs);
    f.close();
    staged.finish(StagedOutput::Outcome::Replace);
    std::cout << "attention: layer " << o->layer << ", " << heads.size() << " head" << (heads.size() == 1 ? "" : "s")
              << ", " << L << " tokens -> " << o->output << "\n  mean |M| at distance 1, 8, 64:";
    for (size_t i = 0; i < heads.size(); ++i) {
      std::cout << "\n    head " << heads[i];
      for (int64_t d : {1, 8, 64})
        if (d < L) std::cout << "  " << by[i][d].item<double>();
    }
    std::cout << "\n";
    return 0;
  };
}

}  // namespace statescope::cli
