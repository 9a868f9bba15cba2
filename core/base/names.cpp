// names.cpp — see names.h.
#include "core/base/names.h"

#include <cstdint>
#include <cstdio>

#include "core/base/error.h"

namespace statescope {

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    int n = 0;
    uint32_t cp = 0;
    if (c < 0x80) { ++i; continue; }
    if ((c & 0xE0) == 0xC0) { n = 1; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { n = 2; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { n = 3; cp = c & 0x07; }
    else return false;
    if (i + n >= s.size()) return false;  // cut short
    for (int k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000)) return false;  // overlong
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

std::string escaped(std::string_view s) {
  std::string out;
  const bool utf8 = valid_utf8(s);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F || (!utf8 && c >= 0x80)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

void check_text(const std::string& text, const std::string& where) {
  if (text.find('\0') != std::string::npos) throw Error(where + ": holds a NUL byte");
  if (!valid_utf8(text)) throw Error(where + ": is not valid UTF-8");
}

void check_name(const std::string& name, const std::string& where, const std::string& what) {
  const std::string shown = "'" + escaped(name) + "'";
  if (name.empty()) throw Error(where + ": " + what + " is empty");
  if (name.size() > 200) throw Error(where + ": " + what + " is " + std::to_string(name.size()) + " bytes long (at most 200)");
  if (!valid_utf8(name)) throw Error(where + ": " + what + " " + shown + " is not valid UTF-8");
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0) throw Error(where + ": " + what + " " + shown + " holds a NUL byte");
    if (c < 0x20 || c == 0x7F) throw Error(where + ": " + what + " " + shown + " holds a control character");
  }
  if (name.find('/') != std::string::npos) throw Error(where + ": " + what + " " + shown + " holds a '/'");
  if (name == "." || name == "..") throw Error(where + ": " + what + " may not be " + shown);
}

}  // namespace statescope
