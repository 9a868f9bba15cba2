// parquet.cpp — see parquet.h.
#include "core/data/parquet.h"

#include "core/base/error.h"
#include "core/base/file_io.h"

#ifdef STATESCOPE_HAVE_PARQUET
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>
#endif

namespace statescope {

#ifndef STATESCOPE_HAVE_PARQUET

bool parquet_available() { return false; }

ParquetSummary read_parquet_texts(const std::string& path, const std::string&,
                                  const std::function<void(int64_t, std::string_view)>&,
                                  const std::function<void(int, int)>&) {
  throw Error(path + ": this build reads no Parquet (configured without Apache Arrow: run tools/setup.sh, "
              "which installs pyarrow into the virtual environment, and configure again)");
}

#else

bool parquet_available() { return true; }

namespace {

// Arrow's and Thrift's messages may quote the damaged bytes: printable ASCII on one line, bounded.
std::string clean(const std::string& m) {
  std::string out;
  for (unsigned char c : m) {
    if (out.size() >= 300) return out + "...";
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : c == '\n' ? ' ' : '?';
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '?')) out.pop_back();
  return out;
}

template <class T>
T value_or_throw(arrow::Result<T> r, const std::string& what) {
  if (!r.ok()) throw Error(what + " (" + clean(r.status().ToString()) + ")");
  return std::move(r).ValueUnsafe();
}

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out.empty() ? "none" : out;
}

template <class A>
void each_value(const arrow::Array& chunk, int64_t& index,
                const std::function<void(int64_t, std::string_view)>& row) {
  const auto& a = static_cast<const A&>(chunk);
  for (int64_t i = 0; i < a.length(); ++i, ++index)
    if (a.IsValid(i)) row(index, a.GetView(i));
}

}  // namespace

ParquetSummary read_parquet_texts(const std::string& path, const std::string& column,
                                  const std::function<void(int64_t, std::string_view)>& row,
                                  const std::function<void(int, int)>& group_done) {
  require_regular_file(path, "Parquet file");  // a FIFO or a device is refused before it is opened
  ParquetSummary s;
  int group = -1;  // the row group being read, for errors
  try {
    auto file = value_or_throw(arrow::io::ReadableFile::Open(path), path + ": cannot open");
    auto reader = value_or_throw(parquet::arrow::OpenFile(file, arrow::default_memory_pool()),
                                 path + ": not a readable Parquet file");
    std::shared_ptr<arrow::Schema> schema;
    if (auto st = reader->GetSchema(&schema); !st.ok())
      throw Error(path + ": cannot read the Parquet schema (" + clean(st.ToString()) + ")");
    for (const auto& f : schema->fields()) s.columns.push_back(f->name());
    const int field = schema->GetFieldIndex(column);
    if (field < 0)
      throw Error(path + ": no column \"" + column + "\" (the file has " + list(s.columns) +
                  "; choose one with the text_field option)");
    const auto type = schema->field(field)->type()->id();
    if (type != arrow::Type::STRING && type != arrow::Type::LARGE_STRING && type != arrow::Type::STRING_VIEW)
      throw Error(path + ": column \"" + column + "\" holds " + schema->field(field)->type()->ToString() +
                  ", not text (string)");
    const auto meta = reader->parquet_reader()->metadata();
    const int leaf = meta->schema()->ColumnIndex(column);
    if (leaf < 0) throw Error(path + ": column \"" + column + "\" is not a plain column (nested?)");
    s.rows = meta->num_rows();
    s.row_groups = reader->num_row_groups();
    int64_t index = 0;
    for (group = 0; group < s.row_groups; ++group) {
      auto table = value_or_throw(reader->ReadRowGroup(group, std::vector<int>{leaf}),
                                  path + ": row group " + std::to_string(group) + " of " +
                                      std::to_string(s.row_groups) + " is unreadable");
      for (const auto& chunk : table->column(0)->chunks()) {
        switch (chunk->type_id()) {
          case arrow::Type::STRING: each_value<arrow::StringArray>(*chunk, index, row); break;
          case arrow::Type::LARGE_STRING: each_value<arrow::LargeStringArray>(*chunk, index, row); break;
          case arrow::Type::STRING_VIEW: each_value<arrow::StringViewArray>(*chunk, index, row); break;
          default: throw Error(path + ": row group " + std::to_string(group) + ": column \"" + column +
                               "\" read as " + chunk->type()->ToString());
        }
      }
      if (group_done) group_done(group + 1, s.row_groups);
    }
    group = -1;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // parquet::ParquetException and friends from a damaged file
    throw Error(path + (group >= 0 ? ": row group " + std::to_string(group) : std::string()) +
                ": not a readable Parquet file (" + clean(e.what()) + ")");
  }
  return s;
}

#endif

}  // namespace statescope
