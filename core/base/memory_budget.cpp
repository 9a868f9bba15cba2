// memory_budget.cpp — see memory_budget.h.
#include "core/base/memory_budget.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/base/error.h"

namespace statescope {

uint64_t mul_sat(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

uint64_t available_memory_bytes() {
  if (const char* e = std::getenv("STATESCOPE_MEMORY_BUDGET"); e && *e) return std::strtoull(e, nullptr, 10);
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
        found = true;
        break;
      }
    std::fclose(f);
    if (found) return static_cast<uint64_t>(kib) * 1024;
  }
  const long pages = ::sysconf(_SC_AVPHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : UINT64_MAX;
}

void check_memory_budget(uint64_t bytes, const std::string& what) {
  const uint64_t have = available_memory_bytes();
  if (bytes <= have) return;
  auto gib = [](uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0));
    return std::string(buf);
  };
  throw Error(what + " needs " + (bytes == UINT64_MAX ? std::string("more than 2^64 bytes") : gib(bytes) + " GiB") +
              " of memory, more than the " + gib(have) + " GiB available (nothing was allocated)");
}

}  // namespace statescope
