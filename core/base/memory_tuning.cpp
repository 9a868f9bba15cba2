// memory_tuning.cpp — see memory_tuning.h.
#include "core/base/memory_tuning.h"

#include <climits>
#include <cstdlib>  // defines __GLIBC__ where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace statescope {

bool tune_malloc_for_tensors() {
#if defined(__GLIBC__)
  const bool mmap_ok = mallopt(M_MMAP_MAX, 0) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  const bool pad_ok = mallopt(M_TOP_PAD, 64 << 20) == 1;
  return mmap_ok && trim_ok && pad_ok;
#else
  return false;
#endif
}

bool malloc_for_probing() {
#if defined(__GLIBC__)
  return mallopt(M_MMAP_THRESHOLD, 16 << 10) == 1 && mallopt(M_TRIM_THRESHOLD, 0) == 1 && mallopt(M_TOP_PAD, 0) == 1;
#else
  return false;
#endif
}

}  // namespace statescope
