// memory_budget.h — sizes checked before allocation: work whose tensors would not fit in the memory
// this machine has free is refused by name, with the sizes, instead of ending in an allocator's
// message (or the kernel's OOM killer). No LibTorch, no Qt.
#pragma once
#include <cstdint>
#include <string>

namespace statescope {

// Bytes of memory available now (MemAvailable in /proc/meminfo; physical pages free elsewhere).
uint64_t available_memory_bytes();
// Throws Error "<what> needs <n> GiB ..., more than the <m> GiB available" when `bytes` exceeds the
// available memory ($STATESCOPE_MEMORY_BUDGET, in bytes, replaces the measurement: for tests and
// for shared machines).
void check_memory_budget(uint64_t bytes, const std::string& what);
// a * b without overflow (saturates at UINT64_MAX), for size arithmetic on untrusted dimensions.
uint64_t mul_sat(uint64_t a, uint64_t b);

}  // namespace statescope
