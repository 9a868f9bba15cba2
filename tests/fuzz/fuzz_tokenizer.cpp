// fuzz_tokenizer.cpp — tokenizer.json loading, then encode and decode with what loaded.
// Input: tokenizer.json bytes, a 0 byte, then text to encode (no 0 byte: the JSON alone, and the
// text "Hello, world"). Seeds: the golden BPE tokenizer and a small one cut from it (bench/fuzz.sh).
#include <cstdint>
#include <cstring>
#include <string>

#include "core/base/error.h"
#include "core/data/tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* zero = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t json_size = zero ? static_cast<size_t>(zero - data) : size;
  const std::string text = zero ? std::string(reinterpret_cast<const char*>(zero + 1), size - json_size - 1)
                                : std::string("Hello, world");
  const auto path = statescope::fuzz::write_file("tokenizer.json", data, json_size);
  try {
    auto tok = statescope::BpeTokenizer::from_file(path);
    auto ids = tok->encode(text);
    for (int32_t id : ids)
      if (id < 0 || id >= tok->vocab_size()) __builtin_trap();  // an id outside the vocabulary
    tok->decode(ids);
  } catch (const statescope::Error&) {
  }
  return 0;
}
