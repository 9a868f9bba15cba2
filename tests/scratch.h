// scratch.h — a fresh folder for each test process (<tmp>/statescope_<pid>/): outputs never meet a
// file left by an earlier run, since statescope refuses to overwrite experiment files by default.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace statescope::test {

// Removed when the test process ends (set STATESCOPE_KEEP_SCRATCH=1 to keep it for a look).
struct ScratchDir {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("statescope_" + std::to_string(::getpid()));
  ScratchDir() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!std::getenv("STATESCOPE_KEEP_SCRATCH")) std::filesystem::remove_all(dir, ec);
  }
};

inline std::string scratch(const std::string& name) {
  static const ScratchDir d;
  return (d.dir / name).string();
}

}  // namespace statescope::test
