// h5_preflight.cpp — the child-process pre-read of HDF5 files (see h5_preflight.h).
//
// core/ never ends its own process: the _exit calls below end only the forked child, which exists
// for nothing else.
#include "core/store/h5_preflight.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/base/error.h"
#include "core/base/memory_tuning.h"
#include "core/store/h5file.h"

namespace statescope {
namespace {

// A statescope experiment file reads in well under a second; $STATESCOPE_H5_PREFLIGHT_SECONDS may
// shorten the wait (bench/fuzz.sh does: a file that hangs the library is then refused sooner).
int time_limit_s() {
  const char* v = std::getenv("STATESCOPE_H5_PREFLIGHT_SECONDS");
  const int s = v ? std::atoi(v) : 0;
  return s > 0 ? s : 120;
}
constexpr int kMaxDepth = 16;      // our files nest 3 deep; hard links may make cycles
constexpr int kMaxObjects = 100000;
bool in_child = false;

// The lock lives behind a pointer so that the child can start with a fresh one: the copy it
// inherits is held by a thread that does not exist there (and its owner id is not the child's).
std::recursive_mutex*& mutex_slot() {
  static auto* m = new std::recursive_mutex;
  return m;
}

// Touches what a reader could touch: every attribute, every numeric dataset (within H5File's
// budget), every group below `group`. Errors are the normal path's to report; only a crash counts.
void walk(const H5File& f, const std::string& group, int depth, int& objects) {
  auto attrs = [&](const std::string& object) {
    for (auto& key : f.attr_names(object)) {
      try {
        f.attr(object, key);
      } catch (const Error&) {
      }
    }
  };
  attrs(group);
  if (depth >= kMaxDepth) return;
  for (auto& child : f.children(group)) {
    if (--objects < 0) return;
    const std::string name = group == "/" ? child : group + "/" + child;
    try {
      if (f.is_group(name)) {
        walk(f, name, depth + 1, objects);
        continue;
      }
      attrs(name);
      if (f.is_integer(name)) f.read_i64(name);
      else f.read_f64(name);
    } catch (const Error&) {
    }
  }
}

[[noreturn]] void child_main(const std::string& path) {
  in_child = true;
  mutex_slot() = new std::recursive_mutex;  // the inherited one stays locked; this process is alone now
  malloc_for_probing();  // big buffers on their own pages: an overrun faults here rather than corrupting
  // A crash must end the child by its signal, not run a handler the host installed.
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) ::signal(s, SIG_DFL);
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
  }
  int code = 0;
  try {
    H5File f(path, H5File::Mode::Read);
    int objects = kMaxObjects;
    walk(f, "/", 0, objects);
  } catch (const Error&) {
    code = 3;  // refused with a message: the parent's own read will say it
  } catch (...) {
    code = 4;
  }
  ::_exit(code);
}

}  // namespace

std::recursive_mutex& hdf5_mutex() { return *mutex_slot(); }

void preflight_read(const std::string& path) {
  std::error_code ec;
  if (in_child || !std::filesystem::is_regular_file(path, ec)) return;
  pid_t pid;
  {
    std::lock_guard<std::recursive_mutex> lock(hdf5_mutex());  // no thread inside HDF5 while forking
    pid = ::fork();
    if (pid == 0) child_main(path);
  }
  if (pid < 0) return;  // no child to be had: read unprotected, as without the pre-read
  int status = 0;
  const int limit = time_limit_s();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit);
  auto pause = std::chrono::microseconds(200);
  while (true) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) return;  // lost the child (someone reaped it): nothing to judge
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      throw Error(path + ": damaged or not an experiment file: reading its structure did not finish in " +
                  std::to_string(limit) + " s");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3)) return;
  const std::string how = WIFSIGNALED(status) ? std::string("signal ") + std::to_string(WTERMSIG(status)) + ", " +
                                                    ::strsignal(WTERMSIG(status))
                                              : "exit status " + std::to_string(WEXITSTATUS(status));
  throw Error(path + ": damaged: reading it crashed the HDF5 library in a separate process (" + how +
              "); the file is refused and nothing of it was read here");
}

}  // namespace statescope
