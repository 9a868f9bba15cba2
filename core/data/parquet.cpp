// parquet.cpp — see parquet.h.
#include "core/data/parquet.h"

#include "core/base/error.h"
#include "core/base/file_io.h"

#include <atomic>

#ifdef STATESCOPE_HAVE_PARQUET
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/io/interfaces.h>
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
                                  const std::function<void(int, int)>&, int64_t) {
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

bool is_text(arrow::Type::type id) {
  return id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING || id == arrow::Type::STRING_VIEW;
}

// A text column, or a dictionary-encoded one whose values are text (pandas' "category", `datasets`'
// ClassLabel-like columns, pyarrow's dictionary_encode()).
bool is_text_column(const arrow::DataType& t) {
  if (is_text(t.id())) return true;
  return t.id() == arrow::Type::DICTIONARY && is_text(static_cast<const arrow::DictionaryType&>(t).value_type()->id());
}

// The string at `i` of a text array.
std::string_view text_at(const arrow::Array& a, int64_t i) {
  switch (a.type_id()) {
    case arrow::Type::STRING: return static_cast<const arrow::StringArray&>(a).GetView(i);
    case arrow::Type::LARGE_STRING: return static_cast<const arrow::LargeStringArray&>(a).GetView(i);
    default: return static_cast<const arrow::StringViewArray&>(a).GetView(i);
  }
}

// A dictionary-encoded chunk: each row's index looked up in its dictionary (indices checked: a damaged
// file names the row instead of reading out of bounds).
void each_dictionary_value(const arrow::Array& chunk, int64_t& index, const std::string& where,
                           const std::function<void(int64_t, std::string_view)>& row) {
  const auto& a = static_cast<const arrow::DictionaryArray&>(chunk);
  const auto& dict = *a.dictionary();
  for (int64_t i = 0; i < a.length(); ++i, ++index) {
    if (!a.IsValid(i)) continue;
    const int64_t k = a.GetValueIndex(i);
    if (k < 0 || k >= dict.length())
      throw Error(where + ": row " + std::to_string(index) + " names dictionary entry " + std::to_string(k) + " of " +
                  std::to_string(dict.length()));
    if (dict.IsValid(k)) row(index, text_at(dict, k));
  }
}

// Arrow's system allocator with a ceiling: an allocation that would take the bytes held past `cap`
// fails with OutOfMemory (Arrow turns it into a Status or a ParquetException) and is remembered, so
// the error can say what happened. The system allocator, not the wheel's default jemalloc, so that
// freed row groups go back to the OS and sanitizers see every buffer.
class CappedPool final : public arrow::MemoryPool {
 public:
  explicit CappedPool(int64_t cap) : cap_(cap) {}
  arrow::Status Allocate(int64_t size, int64_t alignment, uint8_t** out) override {
    if (!take(size)) return refuse(size);
    auto st = base_->Allocate(size, alignment, out);
    if (!st.ok()) held_ -= size;
    return st;
  }
  arrow::Status Reallocate(int64_t old_size, int64_t new_size, int64_t alignment, uint8_t** ptr) override {
    const int64_t grow = new_size - old_size;
    if (!take(grow)) return refuse(new_size);
    auto st = base_->Reallocate(old_size, new_size, alignment, ptr);
    if (!st.ok()) held_ -= grow;
    return st;
  }
  void Free(uint8_t* buffer, int64_t size, int64_t alignment) override {
    base_->Free(buffer, size, alignment);
    held_ -= size;
  }
  int64_t bytes_allocated() const override { return held_; }
  int64_t total_bytes_allocated() const override { return base_->total_bytes_allocated(); }
  int64_t num_allocations() const override { return base_->num_allocations(); }
  std::string backend_name() const override { return "capped " + base_->backend_name(); }
  bool refused() const { return refused_; }
  int64_t cap() const { return cap_; }

 private:
  // Counts `bytes` as held if that keeps the total within the cap (Arrow may allocate from threads).
  bool take(int64_t bytes) {
    int64_t now = held_.load();
    do {
      if (bytes > cap_ - now) return false;
    } while (!held_.compare_exchange_weak(now, now + bytes));
    return true;
  }
  arrow::Status refuse(int64_t size) {
    refused_ = true;
    return arrow::Status::OutOfMemory("a buffer of ", size, " bytes would pass the cap of ", cap_, " bytes");
  }
  arrow::MemoryPool* base_ = arrow::system_memory_pool();
  int64_t cap_;
  std::atomic<int64_t> held_{0};
  std::atomic<bool> refused_{false};
};

std::string kib_or_mib(int64_t bytes) {
  return bytes >= (1 << 20) ? std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"
                            : std::to_string((bytes + 1023) >> 10) + " KiB";
}

}  // namespace

ParquetSummary read_parquet_texts(const std::string& path, const std::string& column,
                                  const std::function<void(int64_t, std::string_view)>& row,
                                  const std::function<void(int, int)>& group_done, int64_t memory_cap) {
  require_regular_file(path, "Parquet file");  // a FIFO or a device is refused before it is opened
  ParquetSummary s;
  int group = -1;  // the row group being read, for errors
  CappedPool pool(memory_cap);
  const auto too_big = [&] {
    return Error(path + (group >= 0 ? ": row group " + std::to_string(group) : std::string()) +
                 " needs more than " + kib_or_mib(pool.cap()) +
                 " of memory to read (a damaged size field, or a row group larger than statescope reads at "
                 "once: write the file with smaller row groups)");
  };
  try {
    auto file = value_or_throw(arrow::io::ReadableFile::Open(path, &pool), path + ": cannot open");
    parquet::ReaderProperties props(&pool);
    parquet::arrow::FileReaderBuilder builder;
    if (auto st = builder.Open(file, props); !st.ok()) {
      if (pool.refused()) throw too_big();
      throw Error(path + ": not a readable Parquet file (" + clean(st.ToString()) + ")");
    }
    // No pre-buffering: it reads ahead on Arrow's IO threads, which could still be filling a buffer from
    // `pool` after an error ends this function. One column, one row group at a time needs none.
    parquet::ArrowReaderProperties arrow_props(/*use_threads=*/false);
    arrow_props.set_pre_buffer(false);
    arrow_props.set_io_context(arrow::io::IOContext(&pool));
    builder.memory_pool(&pool)->properties(arrow_props);
    auto reader = value_or_throw(builder.Build(), path + ": not a readable Parquet file");
    std::shared_ptr<arrow::Schema> schema;
    if (auto st = reader->GetSchema(&schema); !st.ok())
      throw Error(path + ": cannot read the Parquet schema (" + clean(st.ToString()) + ")");
    for (const auto& f : schema->fields()) s.columns.push_back(f->name());
    const int field = schema->GetFieldIndex(column);
    if (field < 0)
      throw Error(path + ": no column \"" + column + "\" (the file has " + list(s.columns) +
                  "; choose one with the text_field option)");
    if (!is_text_column(*schema->field(field)->type()))
      throw Error(path + ": column \"" + column + "\" holds " + schema->field(field)->type()->ToString() +
                  ", not text (string, or a dictionary of strings)");
    const auto meta = reader->parquet_reader()->metadata();
    const int leaf = meta->schema()->ColumnIndex(column);
    if (leaf < 0) throw Error(path + ": column \"" + column + "\" is not a plain column (nested?)");
    s.rows = meta->num_rows();
    s.row_groups = reader->num_row_groups();
    int64_t index = 0;
    for (group = 0; group < s.row_groups; ++group) {
      auto read = reader->ReadRowGroup(group, std::vector<int>{leaf});
      if (!read.ok() && pool.refused()) throw too_big();
      auto table = value_or_throw(std::move(read), path + ": row group " + std::to_string(group) + " of " +
                                                       std::to_string(s.row_groups) + " is unreadable");
      for (const auto& chunk : table->column(0)->chunks()) {
        switch (chunk->type_id()) {
          case arrow::Type::STRING: each_value<arrow::StringArray>(*chunk, index, row); break;
          case arrow::Type::LARGE_STRING: each_value<arrow::LargeStringArray>(*chunk, index, row); break;
          case arrow::Type::STRING_VIEW: each_value<arrow::StringViewArray>(*chunk, index, row); break;
          case arrow::Type::DICTIONARY:
            if (is_text_column(*chunk->type())) {
              each_dictionary_value(*chunk, index, path + ": row group " + std::to_string(group), row);
              break;
            }
            [[fallthrough]];
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
    if (pool.refused()) throw too_big();
    throw Error(path + (group >= 0 ? ": row group " + std::to_string(group) : std::string()) +
                ": not a readable Parquet file (" + clean(e.what()) + ")");
  }
  return s;
}

#endif

}  // namespace statescope
