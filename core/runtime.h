// runtime.h — process-wide compute settings (threads, device) shared by the CLI, tests and app.
#pragma once
#include <string>

namespace statescope {

// Number of intra-op threads. 0 means: $STATESCOPE_THREADS if set, else 1. One thread is the
// default because two OpenMP threads on two shared cores collapse (4-20x slower) when another
// process is busy (DESIGN.md §6); raise it explicitly on a quiet machine.
int configure_threads(int requested);

// Short description: torch version, CUDA availability, thread count.
std::string runtime_summary();

}  // namespace statescope
