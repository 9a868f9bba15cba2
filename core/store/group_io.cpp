// group_io.cpp — the helpers every analysis's record shares (group_io.h).
#include "core/store/group_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "core/base/error.h"

namespace statescope {

bool has_attr(const H5File& f, const std::string& object, const std::string& key) {
  const auto names = f.attr_names(object);
  return std::find(names.begin(), names.end(), key) != names.end();
}

void nx_data(H5File& f, const std::string& group, const std::string& signal, const std::vector<std::string>& axes) {
  f.set_attr(group, "NX_class", "NXdata");
  f.set_attr(group, "signal", signal);
  if (axes.size() == 1) f.set_attr(group, "axes", axes[0]);
  else f.set_attr_strings(group, "axes", axes);
  for (size_t i = 0; i < axes.size(); ++i) f.set_attr_i64(group, axes[i] + "_indices", static_cast<int64_t>(i));
}

void write_columns(H5File& f, const std::string& group, Columns cols, const std::vector<int64_t>& dims) {
  for (const auto& [name, v] : cols)
    if (!v->empty()) f.write(group + "/" + name, v->data(), dims);
}

void GroupReader::columns(std::initializer_list<std::pair<const char*, std::vector<double>*>> cols, int64_t want,
                          const std::string& shape) const {
  for (const auto& [name, into] : cols) {
    const bool optional = name[0] == '?';
    const std::string n = optional ? name + 1 : name;
    if (!optional || has(n)) *into = f64(n, want, shape);
  }
}

void GroupReader::fail(const std::string& what) const { throw Error(f.path() + ": run '" + run + "': " + what); }

void GroupReader::require(const std::string& name) const {
  if (!has(name)) fail("has no " + g.substr(run.size() + 1) + "/" + name);
}

std::string GroupReader::attr_or(const std::string& key, const std::string& missing) const {
  try {
    return f.attr(g, key);
  } catch (const Error&) {
    return missing;
  }
}

int64_t GroupReader::attr_int(const std::string& key, int64_t missing) const {
  const std::string v = attr_or(key, "");
  if (v.empty()) return missing;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (errno != 0 || end == v.c_str() || *end != '\0' || x < 0)
    fail("attribute '" + key + "' of " + g.substr(run.size() + 1) + " is '" + v.substr(0, 40) +
         "', not a whole number >= 0");
  return x;
}

namespace {
template <class V>
void size_is(const GroupReader& g, const std::string& name, const V& v, int64_t want, const std::string& shape) {
  if (static_cast<int64_t>(v.size()) != want)
    g.fail("dataset " + g.g.substr(g.run.size() + 1) + "/" + name + " holds " + std::to_string(v.size()) +
           " values; its axes make it " + shape + " = " + std::to_string(want));
}
}  // namespace

std::vector<double> GroupReader::f64(const std::string& name, int64_t want, const std::string& shape) const {
  auto v = f64(name);
  size_is(*this, name, v, want, shape);
  return v;
}

std::vector<float> GroupReader::f32(const std::string& name, int64_t want, const std::string& shape) const {
  auto v = f.read_f32(ds(name));
  size_is(*this, name, v, want, shape);
  return v;
}

int64_t GroupReader::product(std::initializer_list<int64_t> xs) const {
  int64_t p = 1;
  for (int64_t x : xs) {
    if (x < 0 || (x > 0 && p > (int64_t{1} << 40) / x)) fail("declares axes too large to be results");
    p *= x;
  }
  return p;
}

}  // namespace statescope
