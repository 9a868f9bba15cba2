// parquet.h — the text column of Parquet files (what `datasets`, pyarrow and the Hub write), read
// with Apache Arrow's own C++ Parquet reader, one row group at a time (memory: one row group's
// column, not the file). Arrow comes from the pyarrow wheel in the project's virtual environment, the
// way LibTorch comes from the torch wheel: Debian 12 has no libarrow-dev (see CMakeLists.txt).
// No LibTorch; Arrow only in parquet.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace statescope {

// False in a build without Arrow (-DSTATESCOPE_PARQUET=OFF); read_parquet_texts then throws an Error
// saying so.
bool parquet_available();

struct ParquetSummary {
  int64_t rows = 0;
  int row_groups = 0;
  std::vector<std::string> columns;  // top-level names, in order
};

// The most memory Arrow may hold at once while reading one file (a row group's column, its pages,
// their decompression buffers). A damaged or hostile file can declare page and value counts whose
// buffers would take gigabytes; past this cap the read stops with an Error naming the row group,
// instead of the allocator taking the machine's memory. Real row groups are far smaller (`datasets`
// and pyarrow write some 100 MB at most); a file beyond it is re-written with smaller row groups.
inline constexpr int64_t kParquetMemoryCap = int64_t{1} << 30;  // 1 GiB

// Calls `row(index, text)` for every non-null value of the string column `column` (string,
// large_string or string_view; binary is refused by name), in row order, row group by row group;
// `group_done(k, n)` after each. Throws Error naming the file and the row group at fault, or, when
// the column is missing, the columns the file has. Arrow's buffers come from the system allocator
// (not the wheel's jemalloc), counted against `memory_cap` bytes.
ParquetSummary read_parquet_texts(const std::string& path, const std::string& column,
                                  const std::function<void(int64_t row, std::string_view text)>& row,
                                  const std::function<void(int done, int row_groups)>& group_done = {},
                                  int64_t memory_cap = kParquetMemoryCap);

}  // namespace statescope
