// h5_preflight.h — reading an untrusted HDF5 file in a child process first (private to store/).
//
// Why: the HDF5 library itself crashes on some damaged files (fuzzing found null dereferences in
// libhdf5 1.10.8's attribute iteration, H5Aiterate2 -> H5A__close, on a corrupted attribute table),
// and statescope cannot fix the library. So before this process opens a file that exists,
// preflight_read forks a child that opens it and touches every object the readers could touch:
// each group, each attribute, each numeric dataset (read within the same budget as H5File). If the
// child dies, the file is refused with an Error naming it, and nothing in this process has been
// touched by the damaged bytes. If it ends normally (also when it met an Error), the real read
// goes ahead and reports errors as usual.
#pragma once
#include <mutex>
#include <string>

namespace statescope {

// Held by every HDF5 call of the process (h5file.cpp) and around the fork, so that the child never
// starts with the library's global lock taken by another thread.
std::recursive_mutex& hdf5_mutex();

// Throws Error(path + ": damaged: ...") when reading `path` kills the child or does not finish
// within the time limit. A no-op inside the child itself, and where fork() fails (the read then
// happens unprotected, as before).
void preflight_read(const std::string& path);

}  // namespace statescope
