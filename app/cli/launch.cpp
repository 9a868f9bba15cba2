// launch.cpp — N local ranks of the same command (see launch.h).
#include "app/cli/launch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/base/error.h"
#include "core/dist/comm.h"
#include "core/dist/env.h"

namespace statescope::cli {
namespace {

std::vector<pid_t> g_children;  // written before the handlers are installed, read in them

void forward_signal(int sig) {
  for (pid_t p : g_children)
    if (p > 0) ::kill(p, sig);
}

// The environment of rank r: this process's, with the job's variables set (built before fork: the
// child of a process with threads, the store's among them, may only exec).
std::vector<std::string> rank_environment(int r, int nproc, int port) {
  const std::vector<std::pair<std::string, std::string>> job{
      {"WORLD_SIZE", std::to_string(nproc)}, {"LOCAL_WORLD_SIZE", std::to_string(nproc)},
      {"RANK", std::to_string(r)},           {"LOCAL_RANK", std::to_string(r)},
      {"MASTER_ADDR", "127.0.0.1"},          {"MASTER_PORT", std::to_string(port)},
      {"TORCHELASTIC_USE_AGENT_STORE", "True"}};
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    bool ours = false;
    for (auto& [k, v] : job) ours |= k == key;
    if (!ours) out.push_back(kv);
  }
  for (auto& [k, v] : job) out.push_back(k + "=" + v);
  return out;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                  strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

}  // namespace

int launch_local(int nproc, int argc, char** argv) {
  if (nproc < 1 || nproc > 256) throw Error("--nproc " + std::to_string(nproc) + ": 1 to 256 processes");
  const dist::Env env = dist::env_from_environment();  // STATESCOPE_DIST_TIMEOUT checked before anything starts
  // The rendezvous store lives here, as torchrun's agent hosts it: listening before any rank starts.
  const dist::HostedStore store(env.timeout_s);
  std::vector<char*> args(argv, argv + argc);
  args.push_back(nullptr);
  g_children.assign(nproc, 0);
  for (int r = 0; r < nproc; ++r) {
    const auto envs = rank_environment(r, nproc, store.port());
    std::vector<char*> envp;
    for (auto& kv : envs) envp.push_back(const_cast<char*>(kv.c_str()));
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      forward_signal(SIGTERM);
      throw Error(std::string("--nproc: fork failed (") + std::strerror(errno) + ")");
    }
    if (pid == 0) {
      ::execve("/proc/self/exe", args.data(), envp.data());
      static const char msg[] = "statescope-cli: a rank cannot start (execve failed)\n";
      [[maybe_unused]] auto n = ::write(2, msg, sizeof msg - 1);
      ::_exit(127);
    }
    g_children[r] = pid;
  }
  struct sigaction sa {};
  sa.sa_handler = forward_signal;  // the terminal's Ctrl+C reaches the ranks itself; SIGTERM (a scheduler) is forwarded
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGINT, SIG_IGN);

  int code = 0, alive = nproc;
  bool failed = false;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (alive > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, failed ? WNOHANG : 0);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) break;
    if (pid == 0) {  // after a failure: give the others until the timeout, then stop them
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "statescope-cli: the other ranks did not stop within %d s; killing them\n", env.timeout_s);
        forward_signal(SIGKILL);
        deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    int rank = 0;
    for (; rank < nproc && g_children[rank] != pid; ++rank) {}
    if (rank < nproc) g_children[rank] = 0;
    --alive;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && !failed) {
      failed = true;
      if (WIFEXITED(status)) code = WEXITSTATUS(status);
      else code = (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM) ? 130 : 1;
      if (code != 130)
        std::fprintf(stderr, "statescope-cli: rank %d of %d %s; the other ranks stop at their next collective\n", rank,
                     nproc, describe(status).c_str());
      deadline = std::chrono::steady_clock::now() + std::chrono::seconds(env.timeout_s + 10);
    }
  }
  return code;
}

}  // namespace statescope::cli
