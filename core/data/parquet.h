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

// Calls `row(index, text)` for every non-null value of the string column `column` (string,
// large_string or string_view; binary is refused by name), in row order, row group by row group;
// `group_done(k, n)` after each. Throws Error naming the file and the row group at fault, or, when
// the column is missing, the columns the file has.
ParquetSummary read_parquet_texts(const std::string& path, const std::string& column,
                                  const std::function<void(int64_t row, std::string_view text)>& row,
                                  const std::function<void(int done, int row_groups)>& group_done = {});

}  // namespace statescope
