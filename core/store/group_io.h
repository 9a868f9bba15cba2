// group_io.h — what every analysis's writer and reader (core/analyses/<name>/record.cpp) shares:
// NeXus attributes, the run's default plot, and a checked reader of one group.
//
// A file may come from anywhere (another version, a killed writer, a hand edit, a fuzzer), so every
// reader checks what it returns: each dataset has the size its struct comment promises given the
// axes read beside it, and every number attribute is a whole number. Views, `inspect` and the
// report index the structs without checking again; a file that breaks a promise is refused with an
// Error naming the file, the run and the dataset.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/store/h5file.h"

namespace statescope {

// A NeXus NXdata group: `signal` names the plotted dataset, `axes` one dataset per signal dimension
// (a string for one dimension, an array of strings for more) and <axis>_indices the dimension each
// axis spans, so NeXus viewers (nexusformat, silx, NeXpy) plot it without help.
void nx_data(H5File& f, const std::string& group, const std::string& signal, const std::vector<std::string>& axes);

// A run's `default` plot: the first of its results in the registry's order that may be a default
// plot (the per-position loss when there is one), else its training loss (registry.cpp).
void prefer_default(H5File& f, const std::string& run, const std::string& child);

bool has_attr(const H5File& f, const std::string& object, const std::string& key);

// Datasets of one shape: group/<name> for each (name, values) with values not empty, each `dims`.
using Columns = std::initializer_list<std::pair<const char*, const std::vector<double>*>>;
void write_columns(H5File& f, const std::string& group, Columns cols, const std::vector<int64_t>& dims);

// Where a reader is: the file, the run, the group inside it; says what is wrong.
struct GroupReader {
  const H5File& f;
  std::string run, g;  // g: "<run>/<group>"
  GroupReader(const H5File& file, const std::string& run_name, const std::string& group)
      : f(file), run(run_name), g(run_name + "/" + group) {}

  [[noreturn]] void fail(const std::string& what) const;
  std::string ds(const std::string& name) const { return g + "/" + name; }
  bool has(const std::string& name) const { return f.has(ds(name)); }
  void require(const std::string& name) const;  // fails unless dataset `name` exists
  // A whole-number attribute of the group ("" or absent -> `missing`).
  int64_t attr_int(const std::string& key, int64_t missing = 0) const;
  std::string attr_or(const std::string& key, const std::string& missing) const;
  std::vector<double> f64(const std::string& name, std::vector<int64_t>* dims = nullptr) const {
    return f.read_f64(ds(name), dims);
  }
  std::vector<int64_t> i64(const std::string& name) const { return f.read_i64(ds(name)); }
  // Reads dataset `name` and checks it holds `want` values (`shape` names the axes in the message).
  std::vector<double> f64(const std::string& name, int64_t want, const std::string& shape) const;
  std::vector<float> f32(const std::string& name, int64_t want, const std::string& shape) const;
  // Reads each (name, into) of `want` values; a name starting with '?' is optional (left empty when
  // the file has none: files from before it was written).
  void columns(std::initializer_list<std::pair<const char*, std::vector<double>*>> cols, int64_t want,
               const std::string& shape) const;
  // a * b * ... with every factor >= 0, or fails when the product overflows.
  int64_t product(std::initializer_list<int64_t> xs) const;
  int64_t count(size_t n) const { return static_cast<int64_t>(n); }
};

}  // namespace statescope
