// memory_tuning.h — process-wide allocator settings for tensor work on the CPU, called once at the
// start of each program (CLI, app, benchmarks), never from the library itself.
#pragma once

namespace statescope {

// glibc malloc: blocks below 32 MiB (the largest mmap threshold glibc accepts) come from the heap
// and freed memory stays mapped (trim above 512 MiB), so the tensors a training step frees and
// allocates again reuse pages instead of mapping fresh zeroed ones each step (which cost ~15% of a
// tiny-model step in page faults). Returns false where the C library is not glibc (then nothing is changed).
bool tune_malloc_for_tensors();

// The opposite, for a short-lived probe process reading an untrusted file (core/store/h5_preflight):
// blocks of 16 KiB and more get mappings of their own, so a library bug that runs past the end of a
// buffer meets an unmapped page and dies there, in the probe, instead of overwriting a neighbour
// on a shared heap. Returns false where the C library is not glibc.
bool malloc_for_probing();

}  // namespace statescope
