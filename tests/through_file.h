// through_file.h — a result written to a fresh experiment file by its analysis's writer and read back
// by its reader: the round trip a file makes between a run and a later look. No LibTorch.
#pragma once
#include <string>

#include "core/store/experiment_store.h"
#include "core/store/h5file.h"
#include "tests/scratch.h"

namespace statescope::test {

// write(file, "run", r) into scratch(name) (replaced), then read(h5, "run").
template <class R, class Write, class Read>
auto through_file(const std::string& name, const R& r, Write write, Read read) {
  const auto path = scratch(name);
  {
    WriteOptions w;
    w.overwrite = true;
    auto f = ExperimentFile::create(path, w);
    f->begin_run({"run", "{}", "", "", "none", 0, "", ""});
    write(*f, "run", r);
  }
  H5File f(path, H5File::Mode::Read);
  return read(f, "run");
}

}  // namespace statescope::test
