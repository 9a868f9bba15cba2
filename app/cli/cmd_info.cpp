// cmd_info.cpp — `statescope-cli info --model DIR`: configuration and parameter count.
#include <iostream>

#include "app/cli/commands.h"
#include "core/model/checkpoint.h"
#include "core/model/model_registry.h"

namespace statescope::cli {

Runner add_info(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  app.add_option("--model", *dir, "model directory (config.json + weights) or 'embedded'")->required();
  return [dir]() {
    const std::string path = resolve_model(*dir);
    auto model = load_model_dir(path);
    const auto& c = model->config();
    int64_t n = 0;
    for (auto& p : model->parameters()) n += p.numel();
    std::cout << "model " << *dir << (path != *dir ? " (" + path + ")" : std::string()) << "\n"
              << "  d_model " << c.d_model << ", n_layer " << c.n_layer << ", d_state " << c.d_state
              << ", headdim " << c.headdim << ", nheads " << c.nheads() << ", ngroups " << c.ngroups
              << ", d_conv " << c.d_conv << ", chunk_size " << c.chunk_size << "\n"
              << "  vocab " << c.vocab_size << ", tied " << (c.tie_embeddings ? "yes" : "no")
              << ", gated norm " << (c.norm_per_group ? "per group (mamba_ssm)" : "over d_inner (HF)")
              << ", dt_limit (" << c.dt_limit_lo << ", " << c.dt_limit_hi << ")\n"
              << "  parameters " << n << "\n";
    return 0;
  };
}

}  // namespace statescope::cli
