// fuzz_util.h — what every libFuzzer target here shares: a scratch folder of this process's own
// (parsers that read paths get the input as a file there) and the one rule of every target: a
// parser either returns or throws statescope::Error. Any other exception, a crash, a sanitizer
// report, a leak, or an allocation past libFuzzer's -malloc_limit_mb is a finding.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace statescope::fuzz {

// $TMPDIR/statescope-fuzz-<pid>, made once, removed when the process ends normally.
inline const std::filesystem::path& scratch() {
  static const struct Dir {
    std::filesystem::path p;
    Dir() {
      const char* t = std::getenv("TMPDIR");
      p = std::filesystem::path(t && *t ? t : "/tmp") / ("statescope-fuzz-" + std::to_string(::getpid()));
      std::filesystem::create_directories(p);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  } dir;
  return dir.p;
}

// Writes bytes to scratch()/name (replacing it) and returns the path.
inline std::string write_file(const std::string& name, const uint8_t* data, size_t size) {
  const auto path = scratch() / name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path.string();
}

}  // namespace statescope::fuzz
