// output_lock.h — one writer per output file: an exclusive lock (flock) on "<path>.lock", held while
// a file is written. A second writer fails at once, naming the process that holds it; a lock left
// by a killed process is free again (the kernel drops flocks with their process). No LibTorch.
#pragma once
#include <string>

namespace statescope {

// Throws Error when `path` cannot be written, before any work starts: its folder is missing, is not a
// folder, or refuses writing (permissions, a read-only file system); the message names the folder.
void check_output_writable(const std::string& path);

class OutputLock {
 public:
  explicit OutputLock(const std::string& path);  // throws Error naming `path` and the holder's pid
  ~OutputLock();                                 // unlocks and removes the lock file
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string lock_path_;
  int fd_ = -1;
};

}  // namespace statescope
