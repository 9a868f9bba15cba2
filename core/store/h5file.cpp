// h5file.cpp — HDF5 C API calls, each checked. HDF5's own error stack printing is switched off;
// failures become Error messages naming the file and object.
#include "core/store/h5file.h"

#include <hdf5.h>

#include <algorithm>
#include <exception>
#include <cstdio>
#include <mutex>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/store/h5_preflight.h"

namespace statescope {
namespace {

// HDF5 prints its error stack to stderr unless told not to; the setting is per thread in the
// thread-safe build Debian ships, so every thread that opens a file turns it off (we report errors
// ourselves, naming the file).
void quiet_hdf5() {
  // HDF5 closes every file still open when the process exits (an atexit handler). A file whose flush
  // failed (a full disk) stays open inside the library, and closing it there crashed the process
  // after its error had been reported (SIGSEGV in H5F__close_cb). statescope closes every file it
  // opens itself, so the handler is switched off before the library first starts.
  static std::once_flag no_atexit;
  std::call_once(no_atexit, [] { H5dont_atexit(); });
  thread_local bool done = false;
  if (!done) H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  done = true;
}

// Every HDF5 call of the process goes through this class and holds this lock, so that no thread is
// inside the library when h5_preflight.cpp forks (a child would inherit HDF5's own global lock held
// and wait forever). HDF5's thread-safe build serialises its calls anyway: nothing is lost.
struct Hdf5Guard {
  std::lock_guard<std::recursive_mutex> lock{hdf5_mutex()};
};

// Marks the file failed when a write leaves by an exception: a file whose writes failed is never
// renamed into place (experiment_store.cpp discards it).
struct WriteScope {
  bool& failed;
  int before = std::uncaught_exceptions();
  ~WriteScope() {
    if (std::uncaught_exceptions() > before) failed = true;
  }
};

struct Handle {  // closes an hid_t with the right function; moves, never copies
  hid_t id;
  herr_t (*close)(hid_t);
  Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  Handle(Handle&& o) noexcept : id(o.id), close(o.close) { o.id = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { if (id >= 0) close(id); }
};

std::vector<int64_t> dataspace_dims(hid_t space) {
  const int nd = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> d(std::max(nd, 0));
  if (nd > 0) H5Sget_simple_extent_dims(space, d.data(), nullptr);
  return std::vector<int64_t>(d.begin(), d.end());
}

}  // namespace

H5File::H5File(const std::string& path, Mode mode) : path_(path) {
  // A file that already exists is read first by a child process (h5_preflight.h): if it crashes the
  // HDF5 library, it is refused by name and this process lives on.
  quiet_hdf5();  // before any HDF5 call of the process (see there)
  if (mode != Mode::Create) {
    require_regular_file(path);  // a FIFO or a device is refused before anything opens it
    preflight_read(path);
  }
  const Hdf5Guard hdf5_guard;
  quiet_hdf5();
  if (mode == Mode::Create) {
    id_ = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (id_ < 0) throw Error(path + ": cannot create HDF5 file");
  } else {
    if (H5Fis_hdf5(path.c_str()) <= 0) throw Error(path + ": missing or not an HDF5 file");
    id_ = H5Fopen(path.c_str(), mode == Mode::Read ? H5F_ACC_RDONLY : H5F_ACC_RDWR, H5P_DEFAULT);
    if (id_ < 0) throw Error(path + ": cannot open HDF5 file");
  }
}

H5File::~H5File() {
  const Hdf5Guard hdf5_guard;
  if (id_ >= 0) H5Fclose(id_);
}

void H5File::close() {
  const Hdf5Guard hdf5_guard;
  if (id_ < 0) return;
  const bool writable = !failed_;
  const herr_t flushed = writable ? H5Fflush(id_, H5F_SCOPE_GLOBAL) : 0;
  const herr_t closed = H5Fclose(id_);
  id_ = -1;
  if (flushed < 0 || closed < 0) {
    failed_ = true;
    throw Error(path_ + ": closing the HDF5 file failed (disk full or an I/O error)");
  }
}

void H5File::flush() {
  const Hdf5Guard hdf5_guard;
  const WriteScope ws{failed_};
  if (H5Fflush(id_, H5F_SCOPE_GLOBAL) < 0) throw Error(path_ + ": flushing the HDF5 file failed (disk full or an I/O error)");
}

bool H5File::has(const std::string& name) const {
  const Hdf5Guard hdf5_guard;
  // H5Lexists needs each path component checked in turn.
  std::string acc;
  size_t pos = 0;
  while (pos <= name.size()) {
    const size_t next = name.find('/', pos);
    const std::string part = name.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    if (!part.empty()) {
      acc += (acc.empty() ? "" : "/") + part;
      if (H5Lexists(id_, acc.c_str(), H5P_DEFAULT) <= 0) return false;
    }
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return true;
}

std::vector<int64_t> H5File::dims(const std::string& name) const {
  const Hdf5Guard hdf5_guard;
  if (!has(name)) throw Error(path_ + ": dataset '" + name + "' not found");
  Handle ds{H5Dopen2(id_, name.c_str(), H5P_DEFAULT), H5Dclose};
  if (ds.id < 0) throw Error(path_ + ": '" + name + "' is not a dataset");
  Handle sp{H5Dget_space(ds.id), H5Sclose};
  return dataspace_dims(sp.id);
}

bool H5File::is_integer(const std::string& name) const {
  const Hdf5Guard hdf5_guard;
  Handle ds{H5Dopen2(id_, name.c_str(), H5P_DEFAULT), H5Dclose};
  if (ds.id < 0) throw Error(path_ + ": dataset '" + name + "' not found");
  Handle ty{H5Dget_type(ds.id), H5Tclose};
  return H5Tget_class(ty.id) == H5T_INTEGER;
}

template <class T>
std::vector<T> H5File::read_impl(const std::string& name, int64_t mem_type, std::vector<int64_t>* out_dims) const {
  const Hdf5Guard hdf5_guard;
  if (!has(name)) throw Error(path_ + ": dataset '" + name + "' not found");
  Handle ds{H5Dopen2(id_, name.c_str(), H5P_DEFAULT), H5Dclose};
  if (ds.id < 0) throw Error(path_ + ": '" + name + "' is not a dataset");
  Handle ty{H5Dget_type(ds.id), H5Tclose};
  const auto cls = H5Tget_class(ty.id);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    throw Error(path_ + ": dataset '" + name + "' is not numeric");
  Handle sp{H5Dget_space(ds.id), H5Sclose};
  auto d = dataspace_dims(sp.id);
  // Budget before allocation: the element count may not overflow, and the bytes a read makes may not
  // exceed what the file stores for it by more than deflate can expand (~1032x). A tiny file that
  // declares a huge, never-written (fill-value) dataset is refused here, not by the allocator.
  int64_t n = 1;
  for (auto x : d) {
    if (x < 0 || (x > 0 && n > kMaxReadElements / x))
      throw Error(path_ + ": dataset '" + name + "' declares more than " + std::to_string(kMaxReadElements) + " elements");
    n *= x;
  }
  const double need = static_cast<double>(n) * sizeof(T);
  const double stored = static_cast<double>(H5Dget_storage_size(ds.id));
  if (need > 1048576.0 && need > 1032.0 * stored)
    throw Error(path_ + ": dataset '" + name + "' declares " + std::to_string(n) + " elements (" +
                std::to_string(static_cast<int64_t>(need)) + " bytes) but the file stores " +
                std::to_string(static_cast<int64_t>(stored)) + " bytes for it (damaged or not written by statescope)");
  std::vector<T> out(static_cast<size_t>(n));
  if (n > 0 && H5Dread(ds.id, static_cast<hid_t>(mem_type), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw Error(path_ + ": reading dataset '" + name + "' failed (truncated file or unconvertible type)");
  if (out_dims) *out_dims = d;
  return out;
}

std::vector<float> H5File::read_f32(const std::string& n, std::vector<int64_t>* d) const {
  const Hdf5Guard hdf5_guard;
  return read_impl<float>(n, H5T_NATIVE_FLOAT, d);
}
std::vector<double> H5File::read_f64(const std::string& n, std::vector<int64_t>* d) const {
  const Hdf5Guard hdf5_guard;
  return read_impl<double>(n, H5T_NATIVE_DOUBLE, d);
}
std::vector<int64_t> H5File::read_i64(const std::string& n, std::vector<int64_t>* d) const {
  const Hdf5Guard hdf5_guard;
  return read_impl<int64_t>(n, H5T_NATIVE_INT64, d);
}

void H5File::ensure_parents(const std::string& name) {
  const Hdf5Guard hdf5_guard;
  size_t pos = 0;
  while ((pos = name.find('/', pos + 1)) != std::string::npos) {
    const std::string g = name.substr(0, pos);
    if (g.empty() || g == "/") continue;
    if (H5Lexists(id_, g.c_str(), H5P_DEFAULT) > 0) continue;
    Handle h{H5Gcreate2(id_, g.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose};
    if (h.id < 0) throw Error(path_ + ": cannot create group '" + g + "'");
  }
}

void H5File::write_impl(const std::string& name, const void* data, const std::vector<int64_t>& dims,
                        int64_t mem_type) {
  const Hdf5Guard hdf5_guard;
  const WriteScope ws{failed_};
  ensure_parents(name);
  if (H5Lexists(id_, name.c_str(), H5P_DEFAULT) > 0) H5Ldelete(id_, name.c_str(), H5P_DEFAULT);
  std::vector<hsize_t> hd(dims.begin(), dims.end());
  Handle sp{H5Screate_simple(static_cast<int>(hd.size()), hd.data(), nullptr), H5Sclose};
  Handle pl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
  int64_t n = 1;
  for (auto x : dims) n *= x;
  if (n > 0 && !hd.empty()) {
    // Chunks of about 256 KiB: split the leading dimensions, keep trailing ones whole when possible.
    const size_t elem = H5Tget_size(static_cast<hid_t>(mem_type));
    std::vector<hsize_t> ch = hd;
    size_t bytes = elem;
    for (auto c : ch) bytes *= c;
    for (size_t i = 0; i < ch.size() && bytes > (256u << 10); ++i) {
      while (ch[i] > 1 && bytes > (256u << 10)) {
        bytes /= ch[i];
        ch[i] = (ch[i] + 1) / 2;
        bytes *= ch[i];
      }
    }
    H5Pset_chunk(pl.id, static_cast<int>(ch.size()), ch.data());
    H5Pset_shuffle(pl.id);
    H5Pset_deflate(pl.id, 4);
  }
  Handle ds{H5Dcreate2(id_, name.c_str(), static_cast<hid_t>(mem_type), sp.id, H5P_DEFAULT, pl.id, H5P_DEFAULT),
            H5Dclose};
  if (ds.id < 0) throw Error(path_ + ": cannot create dataset '" + name + "'");
  if (n > 0 && H5Dwrite(ds.id, static_cast<hid_t>(mem_type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw Error(path_ + ": writing dataset '" + name + "' failed (disk full or an I/O error)");
}

void H5File::write(const std::string& n, const float* d, const std::vector<int64_t>& dims) {
  const Hdf5Guard hdf5_guard;
  write_impl(n, d, dims, H5T_NATIVE_FLOAT);
}
void H5File::write(const std::string& n, const double* d, const std::vector<int64_t>& dims) {
  const Hdf5Guard hdf5_guard;
  write_impl(n, d, dims, H5T_NATIVE_DOUBLE);
}
void H5File::write(const std::string& n, const int64_t* d, const std::vector<int64_t>& dims) {
  const Hdf5Guard hdf5_guard;
  write_impl(n, d, dims, H5T_NATIVE_INT64);
}

void H5File::create_growable(const std::string& name, bool integer) {
  const Hdf5Guard hdf5_guard;
  const WriteScope ws{failed_};
  ensure_parents(name);
  if (H5Lexists(id_, name.c_str(), H5P_DEFAULT) > 0) H5Ldelete(id_, name.c_str(), H5P_DEFAULT);
  hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = 4096;
  Handle sp{H5Screate_simple(1, &zero, &unlimited), H5Sclose};
  Handle pl{H5Pcreate(H5P_DATASET_CREATE), H5Pclose};
  // Growable records (training curves) must survive a SIGKILL at any moment. No compression: a
  // deflated chunk moves in the file every time it grows, and a kill between the index update and
  // the data write left an index pointing past the end of the file ("truncated file" on read).
  // Fixed-size chunks allocated (and filled) up front never move; appends write through (no raw
  // chunk cache, see append_impl), so the on-disk index only ever points at written bytes.
  H5Pset_chunk(pl.id, 1, &chunk);
  H5Pset_alloc_time(pl.id, H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(pl.id, H5D_FILL_TIME_ALLOC);
  const hid_t type = integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
  Handle ds{H5Dcreate2(id_, name.c_str(), type, sp.id, H5P_DEFAULT, pl.id, H5P_DEFAULT), H5Dclose};
  if (ds.id < 0) throw Error(path_ + ": cannot create growable dataset '" + name + "'");
}

void H5File::append_impl(const std::string& name, const void* data, int64_t n, int64_t type) {
  const Hdf5Guard hdf5_guard;
  const WriteScope ws{failed_};
  if (n <= 0) return;
  Handle ap{H5Pcreate(H5P_DATASET_ACCESS), H5Pclose};
  H5Pset_chunk_cache(ap.id, 0, 0, 1.0);  // write-through: no raw chunk cache
  Handle ds{H5Dopen2(id_, name.c_str(), ap.id), H5Dclose};
  if (ds.id < 0) throw Error(path_ + ": growable dataset '" + name + "' not found");
  Handle sp0{H5Dget_space(ds.id), H5Sclose};
  hsize_t old = 0;
  H5Sget_simple_extent_dims(sp0.id, &old, nullptr);
  hsize_t size = old + static_cast<hsize_t>(n), count = static_cast<hsize_t>(n);
  if (H5Dset_extent(ds.id, &size) < 0) throw Error(path_ + ": cannot extend dataset '" + name + "'");
  Handle fs{H5Dget_space(ds.id), H5Sclose};
  H5Sselect_hyperslab(fs.id, H5S_SELECT_SET, &old, nullptr, &count, nullptr);
  Handle ms{H5Screate_simple(1, &count, nullptr), H5Sclose};
  if (H5Dwrite(ds.id, static_cast<hid_t>(type), ms.id, fs.id, H5P_DEFAULT, data) < 0)
    throw Error(path_ + ": appending to dataset '" + name + "' failed (disk full or an I/O error)");
}

void H5File::append(const std::string& n, const double* d, int64_t k) { append_impl(n, d, k, H5T_NATIVE_DOUBLE); }
void H5File::append(const std::string& n, const int64_t* d, int64_t k) { append_impl(n, d, k, H5T_NATIVE_INT64); }

std::vector<std::string> H5File::children(const std::string& group) const {
  const Hdf5Guard hdf5_guard;
  std::vector<std::string> out;
  Handle g{H5Oopen(id_, group.c_str(), H5P_DEFAULT), H5Oclose};
  if (g.id < 0) throw Error(path_ + ": group '" + group + "' not found");
#if H5_VERSION_GE(1, 12, 0)
  using LinkInfo = H5L_info2_t;
#else
  using LinkInfo = H5L_info_t;
#endif
  H5Literate(g.id, H5_INDEX_NAME, H5_ITER_INC, nullptr,
              [](hid_t, const char* name, const LinkInfo*, void* op) -> herr_t {
                static_cast<std::vector<std::string>*>(op)->push_back(name);
                return 0;
              },
              &out);
  return out;
}

bool H5File::is_group(const std::string& name) const {
  const Hdf5Guard hdf5_guard;
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  if (!has(name) || H5Oget_info_by_name3(id_, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
#else
  H5O_info_t info;
  if (!has(name) || H5Oget_info_by_name2(id_, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
#endif
  return info.type == H5O_TYPE_GROUP;
}

std::vector<std::string> H5File::attr_names(const std::string& object) const {
  const Hdf5Guard hdf5_guard;
  std::vector<std::string> out;
  Handle obj{H5Oopen(id_, object.c_str(), H5P_DEFAULT), H5Oclose};
  if (obj.id < 0) return out;
  H5Aiterate2(obj.id, H5_INDEX_NAME, H5_ITER_INC, nullptr,
              [](hid_t, const char* name, const H5A_info_t*, void* op) -> herr_t {
                static_cast<std::vector<std::string>*>(op)->push_back(name);
                return 0;
              },
              &out);
  return out;
}

// Opens `object` (creating a group and its parents when missing) and removes an old `key`.
namespace {
Handle open_for_attr(int64_t file, const std::string& path, const std::string& object, const std::string& key) {
  Handle obj{H5Oopen(file, object.c_str(), H5P_DEFAULT), H5Oclose};
  if (obj.id < 0) throw Error(path + ": object '" + object + "' not found for attribute '" + key + "'");
  if (H5Aexists(obj.id, key.c_str()) > 0) H5Adelete(obj.id, key.c_str());
  return obj;
}

Handle utf8_vlen_string() {
  Handle ty{H5Tcopy(H5T_C_S1), H5Tclose};
  H5Tset_size(ty.id, H5T_VARIABLE);
  H5Tset_cset(ty.id, H5T_CSET_UTF8);
  return ty;
}

constexpr hssize_t kMaxAttrStrings = 1024;  // an "axes" list; more is a damaged or foreign file
}  // namespace

void H5File::set_attr(const std::string& object, const std::string& key, const std::string& value) {
  const Hdf5Guard hdf5_guard;
  const WriteScope ws{failed_};
  if (object != "/" && !has(object)) ensure_parents(object + "/x");
  Handle obj = open_for_attr(id_, path_, object, key);
  Handle ty = utf8_vlen_string();
  Handle sp{H5Screate(H5S_SCALAR), H5Sclose};
  Handle at{H5Acreate2(obj.id, key.c_str(), ty.id, sp.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  const char* s = value.c_str();
  if (at.id < 0 || H5Awrite(at.id, ty.id, &s) < 0)
    throw Error(path_ + ": cannot write attribute '" + key + "' on '" + object + "'");
}

namespace {
// A scalar numeric attribute `key` of file type `ftype` on the open object, from memory of `mtype`.
void write_scalar_attr(const Handle& obj, const std::string& path, const std::string& object, const std::string& key,
                       hid_t ftype, hid_t mtype, const void* value) {
  Handle sp{H5Screate(H5S_SCALAR), H5Sclose};
  Handle at{H5Acreate2(obj.id, key.c_str(), ftype, sp.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  if (at.id < 0 || H5Awrite(at.id, mtype, value) < 0)
    throw Error(path + ": cannot write attribute '" + key + "' on '" + object + "'");
}
}  // namespace

void H5File::set_attr_i64(const std::string& object, const std::string& key, int64_t value) {
  const Hdf5Guard hdf5_guard;
  const WriteScope ws{failed_};
  if (object != "/" && !has(object)) ensure_parents(object + "/x");
  write_scalar_attr(open_for_attr(id_, path_, object, key), path_, object, key, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

void H5File::set_attr_f64(const std::string& object, const std::string& key, double value) {
  const Hdf5Guard hdf5_guard;
  const WriteScope ws{failed_};
  if (object != "/" && !has(object)) ensure_parents(object + "/x");
  write_scalar_attr(open_for_attr(id_, path_, object, key), path_, object, key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                    &value);
}

void H5File::set_attr_strings(const std::string& object, const std::string& key, const std::vector<std::string>& values) {
  const Hdf5Guard hdf5_guard;
  const WriteScope ws{failed_};
  if (values.empty()) throw Error(path_ + ": attribute '" + key + "' on '" + object + "': an empty list of strings");
  if (object != "/" && !has(object)) ensure_parents(object + "/x");
  Handle obj = open_for_attr(id_, path_, object, key);
  Handle ty = utf8_vlen_string();
  const hsize_t n = values.size();
  Handle sp{H5Screate_simple(1, &n, nullptr), H5Sclose};
  std::vector<const char*> ptrs;
  for (const auto& v : values) ptrs.push_back(v.c_str());
  Handle at{H5Acreate2(obj.id, key.c_str(), ty.id, sp.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  if (at.id < 0 || H5Awrite(at.id, ty.id, ptrs.data()) < 0)
    throw Error(path_ + ": cannot write attribute '" + key + "' on '" + object + "'");
}

std::string H5File::attr(const std::string& object, const std::string& key) const {
  const Hdf5Guard hdf5_guard;
  Handle obj{H5Oopen(id_, object.c_str(), H5P_DEFAULT), H5Oclose};
  if (obj.id < 0 || H5Aexists(obj.id, key.c_str()) <= 0)
    throw Error(path_ + ": attribute '" + key + "' not found on '" + object + "'");
  Handle at{H5Aopen(obj.id, key.c_str(), H5P_DEFAULT), H5Aclose};
  Handle asp{H5Aget_space(at.id), H5Sclose};
  Handle fty{H5Aget_type(at.id), H5Tclose};
  if (at.id < 0 || asp.id < 0 || fty.id < 0) throw Error(path_ + ": cannot read attribute '" + key + "'");
  const hssize_t n = H5Sget_simple_extent_npoints(asp.id);
  const H5T_class_t cls = H5Tget_class(fty.id);
  const std::string what = path_ + ": attribute '" + key + "' on '" + object + "'";
  if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
    if (n != 1) throw Error(what + " is not a single number");
    char buf[64];
    if (cls == H5T_INTEGER) {
      int64_t v = 0;
      if (H5Aread(at.id, H5T_NATIVE_INT64, &v) < 0) throw Error(what + ": cannot read it");
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    } else {
      double v = 0;
      if (H5Aread(at.id, H5T_NATIVE_DOUBLE, &v) < 0) throw Error(what + ": cannot read it");
      std::snprintf(buf, sizeof buf, "%.17g", v);
    }
    return buf;
  }
  if (cls != H5T_STRING || n < 1 || n > kMaxAttrStrings) throw Error(what + " is not a string, a number or a list of strings");
  // Read into exactly n pointers (H5Aread writes every element).
  Handle ty = utf8_vlen_string();
  std::vector<char*> s(static_cast<size_t>(n), nullptr);
  if (H5Aread(at.id, ty.id, s.data()) < 0) throw Error(path_ + ": cannot read attribute '" + key + "'");
  std::string out = n == 1 ? "" : "[";
  for (hssize_t i = 0; i < n; ++i) {
    const std::string v = s[i] ? s[i] : "";
    if (n == 1) out = v;
    else out += (i ? ", \"" : "\"") + v + "\"";
    if (s[i]) H5free_memory(s[i]);
  }
  if (!s[0] && n == 1) throw Error(path_ + ": cannot read attribute '" + key + "'");
  return n == 1 ? out : out + "]";
}

}  // namespace statescope
