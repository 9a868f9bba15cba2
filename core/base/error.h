// error.h — the one exception type core/ throws.
//
// core/ never calls exit() or abort(): a GUI must survive a bad file. Every failure becomes a
// statescope::Error whose message names the file, field or value at fault, in one line.
#pragma once
#include <new>
#include <stdexcept>
#include <string>

namespace statescope {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// One line for any exception that reaches a run's end (a run is then marked failed with it): an
// allocation that failed is named as such, LibTorch's message loses its C++ stack trace.
inline std::string error_line(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e))
    return "out of memory: an allocation failed (std::bad_alloc); use a shorter length, fewer sequences or a smaller model";
  std::string m = e.what();
  return m.substr(0, m.find('\n'));
}

}  // namespace statescope
