// group_schema.cpp — a GroupSchema written and read (group_schema.h).
#include "core/store/group_schema.h"

#include "core/store/analysis_io.h"

namespace statescope {

namespace {
const char* bare(const char* name) { return name[0] == '?' ? name + 1 : name; }
}  // namespace

void write_schema(H5File& f, const std::string& run, const GroupSchema& s) {
  const std::string g = run + "/" + s.group;
  std::vector<int64_t> dims;
  std::vector<std::string> axis_names;
  for (const auto& a : s.axes) {
    const int64_t n = static_cast<int64_t>(a.i64 ? a.i64->size() : a.f64->size());
    if (a.i64)
      f.write(g + "/" + a.name, a.i64->data(), {n});
    else
      f.write(g + "/" + a.name, a.f64->data(), {n});
    dims.push_back(n);
    axis_names.push_back(a.name);
  }
  for (const auto& [name, values] : s.columns)
    if (!values->empty()) f.write(g + "/" + bare(name), values->data(), dims);
  std::vector<std::pair<std::string, int64_t>> attrs;
  for (const auto& [key, value] : s.attrs) attrs.emplace_back(key, *value);
  describe_group(f, run, s.group, s.signal, axis_names, s.definition, attrs);
}

void read_schema(const H5File& f, const std::string& run, const GroupSchema& s) {
  const GroupReader g{f, run, s.group};
  g.require(s.signal);
  int64_t n = 1;
  std::string shape;
  for (const auto& a : s.axes) {
    if (a.i64)
      *a.i64 = g.i64(a.name);
    else
      *a.f64 = g.f64(a.name);
    n = g.product({n, g.count(a.i64 ? a.i64->size() : a.f64->size())});
    shape += (shape.empty() ? "[" : ", ") + std::string(a.name);
  }
  shape += "]";
  for (const auto& [name, values] : s.columns) g.columns({{name, values}}, n, shape);
  for (const auto& [key, value] : s.attrs) *value = g.attr_int(key);
}

}  // namespace statescope
