// env.cpp — the data-parallel environment (see env.h).
#include "core/dist/env.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "core/base/error.h"

namespace statescope::dist {
namespace {
const char* var(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

long number(const char* name, const char* text, long lo, long hi, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno || end == text || *end || v < lo || v > hi)
    throw Error(std::string(name) + "='" + text + "': " + what);
  return v;
}
}  // namespace

Env env_from_environment() {
  Env e;
  if (const char* t = var("STATESCOPE_DIST_TIMEOUT"))
    e.timeout_s = static_cast<int>(number("STATESCOPE_DIST_TIMEOUT", t, 1, 86400, "seconds, 1 to 86400"));
  const char* ws = var("WORLD_SIZE");
  if (!ws) return e;
  e.world = static_cast<int>(number("WORLD_SIZE", ws, 1, 65536, "the number of processes, 1 to 65536"));
  if (e.world == 1) return e;
  const char* rank = var("RANK");
  if (!rank) throw Error("WORLD_SIZE=" + std::string(ws) + " but RANK is not set (torchrun and srun set both)");
  e.rank = static_cast<int>(number("RANK", rank, 0, e.world - 1, "this process's rank, 0 to WORLD_SIZE-1"));
  if (const char* lr = var("LOCAL_RANK"))
    e.local_rank = static_cast<int>(number("LOCAL_RANK", lr, 0, e.world - 1, "the rank on this machine, 0 to WORLD_SIZE-1"));
  const char* addr = var("MASTER_ADDR");
  if (!addr) throw Error("WORLD_SIZE=" + std::string(ws) + " but MASTER_ADDR (rank 0's host) is not set");
  e.master_addr = addr;
  if (const char* port = var("MASTER_PORT"))
    e.master_port = static_cast<int>(number("MASTER_PORT", port, 1, 65535, "a TCP port, 1 to 65535"));
  if (const char* agent = var("TORCHELASTIC_USE_AGENT_STORE")) e.agent_store = std::string(agent) == "True";
  return e;
}

}  // namespace statescope::dist
