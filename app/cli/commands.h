// commands.h — each CLI verb registers its options on a CLI11 subcommand and returns the function
// that runs it. One verb per file.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace statescope::cli {

using Runner = std::function<int()>;
Runner add_forward(CLI::App& app);
Runner add_info(CLI::App& app);

}  // namespace statescope::cli
