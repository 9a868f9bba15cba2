// fuzz_spec.cpp — experiment specs (parse, then the full check the app runs as you type).
// Seeds: data/experiments/*.json.
#include <cstdint>
#include <string>

#include "core/base/error.h"
#include "core/experiment/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    statescope::parse_spec(text, "fuzz.json");
  } catch (const statescope::Error&) {
  }
  try {
    statescope::check_spec(text, "fuzz.json");
  } catch (const statescope::Error&) {
  }
  return 0;
}
