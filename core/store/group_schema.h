// group_schema.h — one analysis group said once, for both directions: its axes (1-D datasets, one
// per dimension, in order), its columns (float64 datasets over all the axes), its whole-number
// attributes, its NeXus signal and its definition. write_schema writes and marks it as every group
// is marked (describe_group); read_schema reads it back with GroupReader's checks (each column holds
// the product of the axes' lengths; the signal must be there). An analysis whose group holds more
// (copying's foreign starts, the state statistics) writes and reads the rest beside it.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/store/experiment_store.h"
#include "core/store/group_io.h"

namespace statescope {

struct SchemaAxis {
  const char* name;
  std::vector<int64_t>* i64 = nullptr;  // the axis's values: integers ...
  std::vector<double>* f64 = nullptr;   // ... or reals
};

struct GroupSchema {
  std::string group;   // run/<group>
  std::string signal;  // the plotted column; a group without it is refused on read
  std::vector<SchemaAxis> axes;
  // Columns of every axis's length; a name starting with '?' may be absent on read (files from
  // before it was written) and is not written when empty.
  std::vector<std::pair<const char*, std::vector<double>*>> columns;
  std::vector<std::pair<const char*, int64_t*>> attrs;
  std::string definition;
};

// A result's schema: `describe(result)` returns its GroupSchema over the result's own members. The
// writer only reads through the pointers (hence the one cast, here).
template <class R, class Describe>
GroupSchema schema_of(const R& r, Describe describe) {
  return describe(const_cast<R&>(r));
}

// Writes the axes, the non-empty columns and the attributes, then marks the group (describe_group).
void write_schema(H5File& f, const std::string& run, const GroupSchema& s);
// Fills the schema's members from run/<group>.
void read_schema(const H5File& f, const std::string& run, const GroupSchema& s);

// The writer and reader of a result described by `describe` alone.
template <class R, class Describe>
void write_result(ExperimentFile& file, const std::string& run, const R& r, Describe describe) {
  file.write_group([&](H5File& f) { write_schema(f, run, schema_of(r, describe)); });
}
template <class R, class Describe>
R read_result(const H5File& f, const std::string& run, Describe describe) {
  R r;
  read_schema(f, run, describe(r));
  return r;
}

}  // namespace statescope
