// interrupt.h — Ctrl+C (SIGINT) and SIGTERM cancel long CLI work the way the app's Cancel does: the
// first signal makes every progress callback answer "stop", so each running job ends "cancelled" at
// its next step (training writes its checkpoint when it keeps them), the experiment file is closed
// valid, and the CLI exits 130. A second signal ends the process at once.
#pragma once
#include <atomic>

namespace statescope::cli {

inline std::atomic<int> g_interrupts{0};  // lock-free: safe to touch from a signal handler

// Installs the handlers (main() does, before any command runs).
void install_interrupt_handlers();

// True once SIGINT or SIGTERM arrived: progress callbacks return !interrupted().
inline bool interrupted() { return g_interrupts.load(std::memory_order_relaxed) > 0; }

// "cancelled" for a run stopped by a signal, else `status` (a stopped evaluation throws, which
// measure_run would record as "failed").
inline const char* status_after(const char* status) { return interrupted() ? "cancelled" : status; }

}  // namespace statescope::cli
