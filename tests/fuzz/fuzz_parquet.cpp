// fuzz_parquet.cpp — a Parquet file from the wild read for its text column (core/data/parquet.h,
// Arrow's reader behind it): it either yields rows or throws statescope::Error naming the file.
// Input: the file. Seeds: the files pyarrow wrote for tests/golden/parquet (bench/fuzz.sh).
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/base/error.h"
#include "core/data/parquet.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = statescope::fuzz::write_file("data.parquet", data, size);
  try {
    volatile size_t bytes = 0;
    statescope::read_parquet_texts(path, "text", [&](int64_t, std::string_view t) { bytes = bytes + t.size(); });
  } catch (const statescope::Error&) {
  }
  std::error_code ec;
  std::filesystem::remove(path, ec);
  return 0;
}
