// cmd_info.cpp — `statescope-cli info --model DIR`: configuration and parameter count.
#include <iostream>

#include "app/cli/commands.h"
#include "core/compute/runtime.h"
#include "core/model/checkpoint.h"
#include "core/model/model_registry.h"

namespace statescope::cli {

Runner add_info(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  app.add_option("--model", *dir, "model directory (config.json + weights), 'embedded', or a Hugging Face id in the local cache")->required();
  return [dir]() {
    const std::string path = resolve_model(*dir);
    auto model = load_model_dir(path, default_compute());
    int64_t n = 0;
    for (auto& p : model->parameters()) n += p.numel();
    std::cout << "model " << *dir << (path != *dir ? " (" + path + ")" : std::string()) << "\n ";
    const auto fields = describe(model->model_config());
    for (size_t i = 0; i < fields.size(); ++i) std::cout << (i ? ", " : " ") << fields[i].first << " " << fields[i].second;
    std::cout << "\n";
    if (const auto* c = std::get_if<Mamba2Config>(&model->model_config()))
      std::cout << "  tied " << (c->tie_embeddings ? "yes" : "no") << ", gated norm "
                << (c->norm_per_group ? "per group (mamba_ssm)" : "over d_inner (HF)") << ", dt_limit (" << c->dt_limit_lo
                << ", " << c->dt_limit_hi << ")\n";
    else
      std::cout << "  tied " << (std::visit([](const auto& c) { return c.tie_embeddings; }, model->model_config()) ? "yes" : "no")
                << "\n";
    const auto& l = model->state_layout();
    std::cout << "  state per layer: ssm " << l.ssm_axes() << " = " << l.ssm_numel() << ", conv " << (l.conv.empty() ? std::string("none") : l.conv_axes()) << ", "
              << l.groups << " " << l.group_name << (l.groups == 1 ? "" : "s") << " in the per-head views\n"
              << "  parameters " << n << "\n"
              << "  compute: " << default_compute().summary() << "\n";
    return 0;
  };
}

}  // namespace statescope::cli
