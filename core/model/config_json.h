// config_json.h — reading config.json fields with errors that name the file and the field. Shared by
// every architecture's config parser; no LibTorch.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace statescope {

// Parses a config.json text, accepting the JSON extension `Infinity` / `NaN` that Hugging Face writes
// (outside strings). Throws Error naming `source` when the text is not a JSON object.
nlohmann::json parse_config_text(const std::string& text, const std::string& source);

// Reads the fields of one JSON object; `prefix` (e.g. "ssm_cfg.") names nested fields in messages.
struct ConfigReader {
  const nlohmann::json& obj;
  const std::string& source;
  std::string prefix;

  bool has(const char* key) const;
  int64_t req_int(const char* key) const;
  int64_t opt_int(const char* key, int64_t dflt) const;
  double opt_num(const char* key, double dflt) const;
  bool opt_bool(const char* key, bool dflt) const;
  std::string opt_string(const char* key, const std::string& dflt) const;
  void opt_pair(const char* key, double& lo, double& hi) const;  // [lo, hi]
};

// Positive and at most `limit`: sizes are checked before any buffer is made from them.
void require_size(int64_t v, int64_t limit, const std::string& source, const char* field);

// JSON text with `Infinity` written for the placeholder string "__INF__" (nlohmann cannot write it).
std::string dump_with_infinity(const nlohmann::json& j);

}  // namespace statescope
