// paths.cpp — the data folder lookup (see paths.h).
#include "core/base/paths.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef STATESCOPE_SOURCE_DIR
#define STATESCOPE_SOURCE_DIR ""
#endif

namespace statescope {
namespace fs = std::filesystem;

std::string program_path() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::string data_dir() {
  if (const char* env = std::getenv("STATESCOPE_DATA"); env && *env) return env;
  std::error_code ec;
  if (const auto exe = program_path(); !exe.empty()) {
    const auto installed = fs::path(exe).parent_path().parent_path() / "share" / "statescope";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  const std::string source = STATESCOPE_SOURCE_DIR;
  if (!source.empty() && fs::is_directory(source + "/data", ec)) return source + "/data";
  return "data";
}

std::string data_path(const std::string& relative) { return data_dir() + "/" + relative; }

}  // namespace statescope
