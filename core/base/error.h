// error.h — the one exception type core/ throws.
//
// core/ never calls exit() or abort(): a GUI must survive a bad file. Every failure becomes a
// statescope::Error whose message names the file, field or value at fault, in one line.
#pragma once
#include <stdexcept>
#include <string>

namespace statescope {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace statescope
