// fuzz_config.cpp — config.json of every architecture (Hugging Face Mamba2Config and MambaConfig, and
// mamba_ssm's layouts). Seeds: every config.json in data/ and tests/golden/. A config that parses is
// written back and parsed again: what we write must read.
#include <cstdint>
#include <string>

#include "core/base/error.h"
#include "core/model/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  statescope::ModelConfig c;
  try {
    c = statescope::parse_model_config(text, "fuzz/config.json");
  } catch (const statescope::Error&) {
    return 0;
  }
  // Our own writer's output must always be accepted by our reader.
  statescope::parse_model_config(statescope::to_hf_config_json(c), "fuzz/config.json (written back)");
  return 0;
}
