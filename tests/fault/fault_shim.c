// fault_shim.c — an LD_PRELOAD library that makes writes fail the way a full disk or a dying drive
// makes them fail, without privileges (no small filesystem, no mount): the fault-injection tests run
// statescope-cli under it (tests/test_faults.cpp, docs/reliability.md).
//
// Environment:
//   STATESCOPE_FAULT_DIR    only files whose path starts with this folder are affected (required)
//   STATESCOPE_FAULT_AFTER  bytes that may still be written there, over all files together (default 0)
//   STATESCOPE_FAULT_ERRNO  "ENOSPC" (default) or "EIO"
// The write that crosses the budget is cut short (as a filling disk cuts it); every later write to an
// affected file fails with the chosen errno. write, pwrite, pwrite64, writev, pwritev, fallocate,
// posix_fallocate, copy_file_range and sendfile are covered: HDF5's sec2 driver uses pwrite,
// libstdc++'s filebuf uses write, std::filesystem::copy_file uses copy_file_range or sendfile.
// Plain C, no dependency: built as a MODULE library by tests/CMakeLists.txt.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long long budget = -1;  // -1: not read yet
static int fail_errno = ENOSPC;
static const char* dir = NULL;

static void init(void) {
  if (budget >= 0) return;
  dir = getenv("STATESCOPE_FAULT_DIR");
  const char* after = getenv("STATESCOPE_FAULT_AFTER");
  const char* err = getenv("STATESCOPE_FAULT_ERRNO");
  budget = after ? atoll(after) : 0;
  if (budget < 0) budget = 0;
  if (err && strcmp(err, "EIO") == 0) fail_errno = EIO;
}

// Whether fd is a file under STATESCOPE_FAULT_DIR.
static int affected(int fd) {
  init();
  if (!dir || !*dir) return 0;
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  return strncmp(target, dir, strlen(dir)) == 0;
}

// How many of `count` bytes may go to fd: count when unaffected, else what the budget leaves (0 sets
// errno and the caller returns -1).
static ssize_t allowance(int fd, size_t count) {
  if (count == 0 || !affected(fd)) return (ssize_t)count;
  if (budget <= 0) {
    errno = fail_errno;
    return 0;
  }
  const ssize_t n = (long long)count < budget ? (ssize_t)count : (ssize_t)budget;
  budget -= n;
  return n;
}

#define REAL(name, ret, ...)                                  \
  static ret (*real_##name)(__VA_ARGS__);                     \
  static void load_##name(void) {                             \
    if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name);  \
  }

REAL(write, ssize_t, int, const void*, size_t)
REAL(pwrite, ssize_t, int, const void*, size_t, off_t)
REAL(pwrite64, ssize_t, int, const void*, size_t, off64_t)
REAL(writev, ssize_t, int, const struct iovec*, int)
REAL(pwritev, ssize_t, int, const struct iovec*, int, off_t)
REAL(fallocate, int, int, int, off_t, off_t)
REAL(posix_fallocate, int, int, off_t, off_t)
REAL(copy_file_range, ssize_t, int, off64_t*, int, off64_t*, size_t, unsigned int)
REAL(sendfile, ssize_t, int, int, off_t*, size_t)

ssize_t write(int fd, const void* buf, size_t count) {
  load_write();
  const ssize_t n = allowance(fd, count);
  if (count && n == 0) return -1;
  return real_write(fd, buf, (size_t)n);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t off) {
  load_pwrite();
  const ssize_t n = allowance(fd, count);
  if (count && n == 0) return -1;
  return real_pwrite(fd, buf, (size_t)n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off64_t off) {
  load_pwrite64();
  const ssize_t n = allowance(fd, count);
  if (count && n == 0) return -1;
  return real_pwrite64(fd, buf, (size_t)n, off);
}

// The vector forms write only their first buffer (a short write, which callers must handle anyway).
ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  load_write();
  if (iovcnt <= 0 || !affected(fd)) {
    load_writev();
    return real_writev(fd, iov, iovcnt);
  }
  return write(fd, iov[0].iov_base, iov[0].iov_len);
}

ssize_t pwritev(int fd, const struct iovec* iov, int iovcnt, off_t off) {
  if (iovcnt <= 0 || !affected(fd)) {
    load_pwritev();
    return real_pwritev(fd, iov, iovcnt, off);
  }
  return pwrite(fd, iov[0].iov_base, iov[0].iov_len, off);
}

int fallocate(int fd, int mode, off_t off, off_t len) {
  load_fallocate();
  if (affected(fd) && budget < len) {
    errno = fail_errno;
    return -1;
  }
  return real_fallocate(fd, mode, off, len);
}

int posix_fallocate(int fd, off_t off, off_t len) {
  load_posix_fallocate();
  if (affected(fd) && budget < len) return fail_errno;
  return real_posix_fallocate(fd, off, len);
}

ssize_t copy_file_range(int in, off64_t* in_off, int out, off64_t* out_off, size_t len, unsigned int flags) {
  load_copy_file_range();
  const ssize_t n = allowance(out, len);
  if (len && n == 0) return -1;
  return real_copy_file_range(in, in_off, out, out_off, (size_t)n, flags);
}

ssize_t sendfile(int out, int in, off_t* off, size_t count) {
  load_sendfile();
  const ssize_t n = allowance(out, count);
  if (count && n == 0) return -1;
  return real_sendfile(out, in, off, (size_t)n);
}
