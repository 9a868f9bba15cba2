// file_io.cpp — see file_io.h.
#include "core/base/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/base/error.h"

namespace statescope {

namespace {
std::string kind_of(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "a regular file";
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

std::string label(const std::string& path, const std::string& what) {
  return what.empty() || what == path ? path : path + " (" + what + ")";
}
}  // namespace

std::string file_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ENOENT ? "missing" : std::string("unreadable (") + std::strerror(errno) + ")";
  return kind_of(st);
}

void require_regular_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) throw Error(label(path, what) + ": no such file");
    throw Error(label(path, what) + ": cannot read (" + std::strerror(errno) + ")");
  }
  if (!S_ISREG(st.st_mode))
    throw Error(label(path, what) + ": is " + kind_of(st) + ", not a regular file (refused before opening it)");
}

std::string read_file_bounded(const std::string& path, uint64_t max_bytes, const std::string& what) {
  require_regular_file(path, what);
  // O_NONBLOCK: if the path was swapped for a FIFO after the check, open returns at once.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(label(path, what) + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(label(path, what) + ": is not a regular file (refused)");
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw Error(label(path, what) + ": is " + std::to_string(st.st_size) + " bytes, more than the " +
                std::to_string(max_bytes) + " such a file may hold");
  }
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  for (;;) {
    if (got == out.size()) {
      if (out.size() >= max_bytes) break;
      out.resize(std::min<uint64_t>(max_bytes, out.size() * 2 + 4096));  // it grew while we read
    }
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw Error(label(path, what) + ": read failed (" + std::strerror(e) + ")");
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

std::string write_error(const std::string& path, int err, const std::string& what) {
  std::string why = std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) why = "no space left on the device (disk full)";
  if (err == EFBIG) why = "the file is larger than this system allows";
  return path + ": " + (what.empty() ? "" : "writing " + what + " ") + "failed: " + why;
}

FileWriter::FileWriter(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(path + ": cannot create (" + std::strerror(errno) + ")");
  buf_.reserve(1 << 20);
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void FileWriter::write(const void* data, size_t bytes) {
  if (fd_ < 0) throw Error(path_ + ": write after close");
  const char* p = static_cast<const char*>(data);
  if (buf_.size() + bytes > buf_.capacity()) flush_buffer();
  if (bytes >= buf_.capacity()) {  // large pieces go straight out
    buf_.assign(p, bytes);
    flush_buffer();
    buf_.shrink_to_fit();
    buf_.reserve(1 << 20);
  } else {
    buf_.append(p, bytes);
  }
  bytes_ += bytes;
}

void FileWriter::flush_buffer() {
  size_t done = 0;
  while (done < buf_.size()) {
    const ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : ENOSPC;  // a write of 0 bytes: the device took nothing
      buf_.clear();
      throw Error(write_error(path_, e));
    }
    done += static_cast<size_t>(n);
  }
  buf_.clear();
}

void FileWriter::close() {
  if (fd_ < 0) return;
  flush_buffer();
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {  // EINVAL: a file system without fsync
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error(write_error(path_, e));
  }
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0 && errno != EINTR) throw Error(write_error(path_, errno));
}

}  // namespace statescope
