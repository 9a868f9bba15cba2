// paths.cpp — the data folder lookup (see paths.h).
#include "core/base/paths.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

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

namespace {
struct Candidate {
  std::string label, path;  // path "" = not applicable (variable unset, program path unknown, no source tree)
};

// The places data_dir() looks, in its order.
std::vector<Candidate> candidates() {
  std::vector<Candidate> c;
  const char* env = std::getenv("STATESCOPE_DATA");
  c.push_back({"$STATESCOPE_DATA", env && *env ? env : ""});
  const std::string exe = program_path();
  c.push_back({"the installed share/statescope",
               exe.empty() ? "" : (fs::path(exe).parent_path().parent_path() / "share" / "statescope").string()});
  const std::string source = STATESCOPE_SOURCE_DIR;
  c.push_back({"the source tree", source.empty() ? "" : source + "/data"});
  c.push_back({"the working folder", "data"});
  return c;
}
}  // namespace

std::string data_dir() {
  std::error_code ec;
  const auto c = candidates();
  if (!c[0].path.empty()) return c[0].path;  // taken as given: errors then name it
  for (size_t i = 1; i < c.size(); ++i)
    if (!c[i].path.empty() && fs::is_directory(c[i].path, ec)) return c[i].path;
  return "data";
}

std::string data_dir_searched() {
  std::error_code ec;
  std::string out = "searched";
  const auto c = candidates();
  for (size_t i = 0; i < c.size(); ++i) {
    out += i ? ", " : " ";
    if (c[i].path.empty()) {
      out += c[i].label + " (" + (i == 0 ? "not set" : "unknown") + ")";
      continue;
    }
    out += (i == 0 ? "$STATESCOPE_DATA=" : "") + c[i].path + (fs::is_directory(c[i].path, ec) ? "" : " (missing)");
    if (i == 0) break;  // a set variable is the only place looked at
  }
  return out + "; set STATESCOPE_DATA to the folder that holds models/, corpus/ and experiments/";
}

std::string data_path(const std::string& relative) { return data_dir() + "/" + relative; }

}  // namespace statescope
