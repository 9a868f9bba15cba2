// error_text.h — the message of the statescope::Error a call throws, for tests that check what an
// error says ("(no error)" when it throws none). No LibTorch.
#pragma once
#include <functional>
#include <string>

#include "core/base/error.h"

namespace statescope::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace statescope::test
