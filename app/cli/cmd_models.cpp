// cmd_models.cpp — `statescope-cli models`: the models --model can name without a path: the committed
// ones and the Mamba-family models in the local Hugging Face cache (nothing is downloaded).
#include <iostream>

#include "app/cli/commands.h"
#include "core/base/hub_cache.h"
#include "core/base/paths.h"
#include "core/model/cached_models.h"
#include "core/model/model_registry.h"

namespace statescope::cli {

Runner add_models(CLI::App& app) {
  auto all = std::make_shared<bool>(false);
  app.add_flag("--all", *all, "also list the cached repositories that are not a model statescope reads, and why");
  return [all]() {
    std::cout << "committed (" << data_dir() << "/models):\n ";
    for (const auto& name : committed_models()) std::cout << " " << name;
    std::cout << "\n";
    const HubCache cache = hub_cache();
    std::vector<std::string> skipped;
    const auto models = list_cached_models(&skipped);
    std::cout << "Hugging Face cache (" << cache.dir << ", from " << cache.source << "):\n";
    for (const auto& m : models) std::cout << "  " << describe_cached_model(m) << "\n";
    if (models.empty()) std::cout << "  no Mamba-family model (download one with `huggingface-cli download state-spaces/mamba2-130m`)\n";
    if (!skipped.empty()) {
      if (*all)
        for (const auto& s : skipped) std::cout << "  skipped " << s << "\n";
      else
        std::cout << "  (" << skipped.size() << " other cached " << (skipped.size() == 1 ? "repository" : "repositories")
                  << " left out; --all lists them)\n";
    }
    return 0;
  };
}

}  // namespace statescope::cli
