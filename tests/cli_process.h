// cli_process.h — statescope-cli run as a user runs it, in a child process with a time limit and
// extra environment entries; stdout and stderr together. For tests that check exit codes and
// messages (test_faults.cpp, test_output_flags.cpp). No LibTorch.
#pragma once
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace statescope::test {

struct Result {
  int code = -1;       // exit status, -1 when killed by a signal or timed out
  int signal = 0;      // the signal that ended it
  bool timed_out = false;
  std::string out;     // stdout and stderr together
};

// Runs statescope-cli with `args`, extra environment entries, and a time limit (a FIFO that blocks
// fails the test instead of hanging it). `on_start` runs in the parent after the child started.
inline Result run_program(const char* exe, const std::vector<std::string>& args, const std::vector<std::string>& env,
                   int timeout_s, const std::function<void(pid_t)>& on_start) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipefd[1], 1);
    ::dup2(pipefd[1], 2);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv{const_cast<char*>(exe)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(exe, argv.data());
    ::_exit(127);
  }
  ::close(pipefd[1]);
  if (on_start) on_start(pid);
  Result r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{pipefd[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000))) <= 0) continue;
    const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n <= 0) break;
    r.out.append(buf, static_cast<size_t>(n));
  }
  ::close(pipefd[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (WIFEXITED(st)) r.code = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  return r;
}

inline Result cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {}, int timeout_s = 120,
           const std::function<void(pid_t)>& on_start = {}) {
  return run_program(STATESCOPE_CLI, args, env, timeout_s, on_start);
}

inline std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace statescope::test
