// memory_tuning.h — process-wide allocator settings for tensor work on the CPU, called once at the
// start of each program (CLI, app, benchmarks), never from the library itself.
#pragma once

namespace statescope {

// glibc malloc: every block comes from the heap (no block gets a mapping of its own: M_MMAP_MAX 0)
// and freed memory stays mapped until 2 GiB of it sit free at the heap's top (M_TRIM_THRESHOLD at
// the largest value glibc takes), so the tensors a training step frees and allocates again reuse
// pages instead of mapping fresh zeroed ones each step. Before, blocks of 32 MiB and more (glibc's
// largest mmap threshold) were mapped per use: a 130m training step's logits, their gradients and the
// LM head's weight gradients, about 1 GB of page faults and zeroing per step, 8-10% of its time at two
// threads (bench/RESULTS.md). The price: the process keeps what it once used (its peak, as a caching
// allocator does), up to 2 GiB more. Returns false where the C library is not glibc (then nothing is changed).
bool tune_malloc_for_tensors();

// The opposite, for a short-lived probe process reading an untrusted file (core/store/h5_preflight):
// blocks of 16 KiB and more get mappings of their own, so a library bug that runs past the end of a
// buffer meets an unmapped page and dies there, in the probe, instead of overwriting a neighbour
// on a shared heap. Returns false where the C library is not glibc.
bool malloc_for_probing();

}  // namespace statescope
