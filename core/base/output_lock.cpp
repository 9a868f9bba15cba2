// output_lock.cpp — flock on "<path>.lock" (see output_lock.h).
#include "core/base/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/error.h"

namespace statescope {

void check_output_writable(const std::string& path) {
  if (path.empty()) throw Error("no output file named");
  std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  if (path.find('/') == std::string::npos) dir = ".";
  if (dir.empty()) dir = "/";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw Error(path + ": cannot write here: the folder " + dir + " " +
                (errno == ENOENT ? "does not exist" : std::string("cannot be read (") + std::strerror(errno) + ")") +
                " (nothing was run)");
  if (!S_ISDIR(st.st_mode)) throw Error(path + ": cannot write here: " + dir + " is not a folder (nothing was run)");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(path + ": cannot write here: the folder " + dir + " is not writable (" + std::strerror(errno) +
                "; nothing was run)");
}

OutputLock::OutputLock(const std::string& path) : lock_path_(path + ".lock") {
  check_output_writable(path);
  for (int attempt = 0; attempt < 10; ++attempt) {
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(path + ": cannot create the lock file " + lock_path_ + " (" + std::strerror(errno) + ")");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      char pid[32] = {0};
      const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
      ::close(fd_);
      fd_ = -1;
      throw Error(path + ": another statescope process" + (n > 0 ? std::string(" (pid ") + pid + ")" : std::string()) +
                  " is writing this file; wait for it or choose another output");
    }
    // The holder before us may have removed the file between our open and our flock: then we hold a
    // lock on a file nobody else sees. Keep the lock only if it is still the file at the path.
    struct stat held {}, now {};
    if (::fstat(fd_, &held) == 0 && ::stat(lock_path_.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      const std::string pid = std::to_string(::getpid());
      if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
      return;
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw Error(path + ": could not lock " + lock_path_ + " (it keeps being replaced)");
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // before unlocking: a waiter that opened it re-checks the inode
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace statescope
