// commands.h — each CLI verb registers its options on a CLI11 subcommand and returns the function
// that runs it. One verb per file.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace statescope::cli {

using Runner = std::function<int()>;
// `command` is the whole command line, recorded with what the verb writes.
Runner add_forward(CLI::App& app);
Runner add_info(CLI::App& app);
Runner add_models(CLI::App& app);
Runner add_pretrain(CLI::App& app, const std::string& command);
Runner add_posttrain(CLI::App& app, const std::string& command);
Runner add_eval(CLI::App& app, const std::string& command);
Runner add_run(CLI::App& app, const std::string& command);
Runner add_inspect(CLI::App& app, const std::string& command);
Runner add_effrem(CLI::App& app, const std::string& command);
Runner add_states(CLI::App& app, const std::string& command);
Runner add_unexplored(CLI::App& app, const std::string& command);
Runner add_report(CLI::App& app, const std::string& command);
Runner add_passkey(CLI::App& app, const std::string& command);
Runner add_copying(CLI::App& app, const std::string& command);
Runner add_babi(CLI::App& app, const std::string& command);
Runner add_data(CLI::App& app, const std::string& command);
Runner add_attention(CLI::App& app, const std::string& command);

}  // namespace statescope::cli
