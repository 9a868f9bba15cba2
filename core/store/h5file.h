// h5file.h — a small RAII wrapper over the HDF5 C API: files, groups, typed datasets, attributes.
//
// What it is: just enough HDF5 for statescope's files, with errors as statescope::Error naming the
// file and the dataset. What it is not: a general HDF5 binding. No LibTorch, no Qt.
// Datasets are written chunked with shuffle + gzip (readable by h5py and HDFView without plugins).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

class H5File {
 public:
  enum class Mode { Read, ReadWrite, Create };  // Create truncates
  H5File(const std::string& path, Mode mode);
  ~H5File();
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;

  const std::string& path() const { return path_; }
  bool has(const std::string& name) const;            // dataset or group, "a/b/c" allowed
  std::vector<int64_t> dims(const std::string& dataset) const;
  bool is_integer(const std::string& dataset) const;

  // Reads any numeric dataset, converted by HDF5 to the requested type.
  std::vector<float> read_f32(const std::string& dataset, std::vector<int64_t>* dims = nullptr) const;
  std::vector<double> read_f64(const std::string& dataset, std::vector<int64_t>* dims = nullptr) const;
  std::vector<int64_t> read_i64(const std::string& dataset, std::vector<int64_t>* dims = nullptr) const;

  // Writes a new dataset (parent groups are created). Replaces an existing one of the same name.
  void write(const std::string& dataset, const float* data, const std::vector<int64_t>& dims);
  void write(const std::string& dataset, const double* data, const std::vector<int64_t>& dims);
  void write(const std::string& dataset, const int64_t* data, const std::vector<int64_t>& dims);

  // Growable 1-D datasets (unlimited, chunked, gzip): created empty, then appended to.
  void create_growable(const std::string& dataset, bool integer);
  void append(const std::string& dataset, const double* data, int64_t n);
  void append(const std::string& dataset, const int64_t* data, int64_t n);

  // Attributes on a group or dataset ("/" for the root): a UTF-8 string, a number (int64 or double:
  // NeXus readers and h5py see numbers, not text), or an array of strings (NeXus "axes").
  void set_attr(const std::string& object, const std::string& key, const std::string& value);
  void set_attr(const std::string& object, const std::string& key, const char* value) {
    set_attr(object, key, std::string(value));
  }
  void set_attr_i64(const std::string& object, const std::string& key, int64_t value);
  void set_attr_f64(const std::string& object, const std::string& key, double value);
  void set_attr_strings(const std::string& object, const std::string& key, const std::vector<std::string>& values);
  // Any of the above as text: a string as it is, a number in decimal ("%.17g" for doubles), an array
  // of strings as a JSON array (["layer", "position"]). Throws Error naming the attribute otherwise.
  std::string attr(const std::string& object, const std::string& key) const;
  std::vector<std::string> attr_names(const std::string& object) const;
  std::vector<std::string> children(const std::string& group) const;  // member names, sorted
  bool is_group(const std::string& name) const;
  void flush();  // throws Error when HDF5 cannot write its caches (disk full, I/O error)
  // Flushes and closes; throws Error naming the file when either fails. The destructor closes
  // without checking.
  void close();
  // Whether a write, append, attribute or flush of this file has failed: its contents are then not
  // to be trusted (the experiment store discards such a file instead of renaming it into place).
  bool failed() const { return failed_; }

 private:
  void append_impl(const std::string& name, const void* data, int64_t n, int64_t type);
  void write_impl(const std::string& name, const void* data, const std::vector<int64_t>& dims, int64_t type);
  template <class T>
  std::vector<T> read_impl(const std::string& name, int64_t type, std::vector<int64_t>* dims) const;
  void ensure_parents(const std::string& name);
  std::string path_;
  static constexpr int64_t kMaxReadElements = int64_t{1} << 34;  // 128 GiB of doubles: beyond any real result
  int64_t id_ = -1;  // hid_t
  bool failed_ = false;
};

}  // namespace statescope
