// run_statuses.h — the `status` of every run of an experiment file, and how many a cancel stopped:
// after a cancel every run is "finished" or "cancelled", never left "running". No LibTorch.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/store/h5file.h"

namespace statescope::test {

inline std::map<std::string, std::string> run_statuses(const std::string& path) {
  H5File f(path, H5File::Mode::Read);
  std::map<std::string, std::string> out;
  for (const auto& run : f.children("/")) out[run] = f.attr(run, "status");
  return out;
}

// The runs a cancel stopped; every other run must have finished.
inline int cancelled_runs(const std::map<std::string, std::string>& statuses) {
  int n = 0;
  for (const auto& [run, s] : statuses) {
    EXPECT_TRUE(s == "finished" || s == "cancelled") << run << ": " << s;
    n += s == "cancelled";
  }
  return n;
}

}  // namespace statescope::test
