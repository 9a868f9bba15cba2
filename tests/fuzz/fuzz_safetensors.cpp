// fuzz_safetensors.cpp — the safetensors reader (header JSON, dtypes, shapes, offsets) on any bytes.
// Seeds: every model.safetensors in data/ and tests/golden/.
#include <cstdint>
#include <vector>

#include "core/base/error.h"
#include "core/model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = statescope::parse_safetensors(std::vector<char>(data, data + size), "fuzz.safetensors");
    volatile int64_t total = 0;  // touch every record the reader accepted: each must lie inside the buffer
    for (auto& [name, r] : f.tensors) {
      const char* p = f.bytes(r);
      if (r.end > r.begin) total = total + p[0] + p[r.end - r.begin - 1];
    }
  } catch (const statescope::Error&) {
  }
  return 0;
}
