// paths.h — where statescope finds what it ships (the embedded model, the corpus, the experiment
// specs), the same way in the CLI, the app and the tests. No LibTorch, no Qt.
#pragma once
#include <string>

namespace statescope {

// The data folder, the first of:
//   1. $STATESCOPE_DATA (taken as given, even when it does not exist: errors then name it);
//   2. <folder of the running program>/../share/statescope (an installed tree, relocatable);
//   3. the source tree's data/ (a program run from its build tree);
//   4. ./data.
std::string data_dir();

// Where data_dir() looked, in order, with what it found there, for error messages: "searched
// $STATESCOPE_DATA (not set), /usr/bin/../share/statescope (missing), /src/data (missing), ./data (missing)".
std::string data_dir_searched();

// data_dir() + "/" + relative, e.g. data_path("experiments/demo.json").
std::string data_path(const std::string& relative);

// Absolute path of the running program ("" when the system does not say).
std::string program_path();

}  // namespace statescope
