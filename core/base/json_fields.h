// json_fields.h — reading the fields of one JSON object for a spec or a config, with errors that
// name the source and the field's full path ("demo.json: field 'posttrain.steps' has the wrong
// type: \"many\"") and that refuse a field nobody reads (a typo is an error, not a silent default).
// No LibTorch, no Qt.
#pragma once
#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "core/base/error.h"
#include "core/base/names.h"

namespace statescope {

class JsonFields {
 public:
  // `src` names the file or text in errors; `path` is the object's place ("" at the top,
  // "posttrain." inside posttrain). Throws Error unless `j` is an object.
  JsonFields(const nlohmann::json& j, std::string src, std::string path = "")
      : j_(j), src_(std::move(src)), path_(std::move(path)) {
    if (!j_.is_object())
      throw Error(src_ + (path_.empty() ? std::string(": expected a JSON object")
                                        : ": field '" + path_.substr(0, path_.size() - 1) + "' must be an object"));
  }

  bool has(const char* key) const { return j_.contains(key); }
  const nlohmann::json& json() const { return j_; }
  const std::string& src() const { return src_; }
  std::string name(const std::string& key) const { return path_ + key; }  // "posttrain.steps"

  // The field's value, or `dflt` when absent; Error naming the field when its type is wrong. Whole
  // numbers must be written as such (a seed of 1.5 is refused, not truncated) and unsigned ones >= 0.
  template <class T>
  T get(const char* key, const T& dflt) const {
    if (!j_.contains(key)) return dflt;
    const nlohmann::json& v = j_.at(key);
    auto wrong = [&] { return Error(src_ + ": field '" + name(key) + "' has the wrong type: " + v.dump()); };
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!v.is_number_integer() || (std::is_unsigned_v<T> && !v.is_number_unsigned())) throw wrong();
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      if (!v.is_array()) throw wrong();
      for (const auto& x : v)
        if (!x.is_number_integer()) throw wrong();
    }
    if constexpr (std::is_same_v<T, std::string>) {  // a NUL would cut the string short at every C API
      if (!v.is_string()) throw wrong();
      check_text(v.get<std::string>(), src_ + ": field '" + name(key) + "'");
    }
    try {
      return v.get<T>();
    } catch (const std::exception&) {
      throw wrong();
    }
  }
  // Reads the field into `into` when present (so `into` holds the default).
  template <class T>
  void read(const char* key, T& into) const { into = get<T>(key, into); }

  // The object inside a field (empty when absent), with its path.
  JsonFields child(const char* key) const {
    static const nlohmann::json empty = nlohmann::json::object();
    return JsonFields(j_.contains(key) ? j_.at(key) : empty, src_, name(key) + ".");
  }

  // Error naming the first field that is not in `known`.
  void only(std::initializer_list<const char*> known) const {
    for (auto& [k, v] : j_.items()) {
      bool ok = false;
      for (const char* n : known) ok = ok || k == n;
      if (!ok) throw Error(src_ + ": unknown field '" + name(k) + "'");
    }
  }

  void only(const std::vector<std::string>& known) const {
    for (auto& [k, v] : j_.items())
      if (std::find(known.begin(), known.end(), k) == known.end()) throw Error(src_ + ": unknown field '" + name(k) + "'");
  }

  // Error "src: field 'path.key' <why>".
  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw Error(src_ + ": field '" + name(key) + "' " + why);
  }

 private:
  const nlohmann::json& j_;
  std::string src_, path_;
};

}  // namespace statescope
