// json_error.h — a JSON syntax error as a person reads it: where, and what was wrong, without
// nlohmann's exception prefix. No LibTorch.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace statescope {

// "not valid JSON at line 3, column 12: unexpected '}'; expected string literal" from nlohmann's
// "[json.exception.parse_error.101] parse error at line 3, column 12: syntax error while parsing object
// key - unexpected '}'; expected string literal"; other errors (a number out of range) keep their
// sentence: "not valid JSON: number overflow parsing '3e477'".
inline std::string json_error_text(const nlohmann::json::exception& e) {
  std::string m = e.what();
  if (const auto p = m.find("] "); m.rfind("[json.exception.", 0) == 0 && p != std::string::npos) m = m.substr(p + 2);
  std::string where;
  static const std::string at = "parse error at ";
  if (const auto colon = m.find(": "); m.rfind(at, 0) == 0 && colon != std::string::npos) {
    where = " at " + m.substr(at.size(), colon - at.size());  // "line 3, column 12"
    m = m.substr(colon + 2);
  }
  if (const auto dash = m.find(" - "); m.rfind("syntax error while parsing", 0) == 0 && dash != std::string::npos)
    m = m.substr(dash + 3);
  return "not valid JSON" + where + ": " + m;
}

}  // namespace statescope
