// names.h — strings from specs, flags and files that become names (run groups in an HDF5 file, file
// names, column headers) are checked here: valid UTF-8, no NUL or other control character, no '/',
// not "." or "..", at most 200 bytes. A NUL inside a std::string would otherwise cut the name short at
// the C API boundary (HDF5) and make two runs one. No LibTorch, no Qt.
#pragma once
#include <string>
#include <string_view>

namespace statescope {

// Whether `s` is valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool valid_utf8(std::string_view s);
// Throws Error "<where>: <what> ..." saying what is wrong with `name` (its bytes shown escaped).
void check_name(const std::string& name, const std::string& where, const std::string& what = "name");
// Throws Error unless `text` is valid UTF-8 without NUL (free text that is stored: specs, messages).
void check_text(const std::string& text, const std::string& where);
// `s` with control characters and invalid bytes written as \xNN (for messages).
std::string escaped(std::string_view s);

}  // namespace statescope
