// output_rule.h — the one rule every output of statescope follows (docs/reliability.md, "Outputs"):
//
//  1. A file or folder is written under a staging name beside its target ("<path>.partial") and
//     renamed onto the target only when it is complete: a reader sees the old file or the new one,
//     never half of one.
//  2. An existing target is replaced only when the caller says so (--overwrite; the app asks first),
//     never when it is one of the work's inputs (the same inode, or a folder holding the output, or
//     the output folder holding an input), and never when it is not a regular file or folder of the
//     expected kind (a FIFO, a device: refused even with --overwrite).
//  3. Nothing is renamed onto an existing target unless the work ended well (Outcome::Replace); a
//     cancelled or failed replacement leaves the target as it was and its own results in the staging
//     name, said on stderr. A failed write removes the staging copy (it may be damaged).
//  4. One writer per target (OutputLock on "<path>.lock").
// No LibTorch, no Qt, no HDF5.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/output_lock.h"

namespace statescope {

struct OutputRule {
  bool overwrite = false;           // an existing target may be replaced
  std::vector<std::string> inputs;  // files and folders the work reads ("" entries are ignored)
  bool folder = false;              // the output is a folder (a model directory), not a file
};

// Throws Error naming `path` when rule 2 forbids writing it (before any work starts); also when its
// folder is missing or not writable.
void check_output(const std::string& path, const OutputRule& rule);

// A file or folder being written under its staging name.
class StagedOutput {
 public:
  enum class Outcome {
    Replace,      // complete: rename onto the target
    KeepNew,      // cancelled or a run failed: rename only onto a target that did not exist; else keep staging
    KeepStaging,  // unfinished work to continue later (a stopped training): the staging name stays
    Discard,      // a write failed: remove the staging copy
  };
  enum class Start {
    Empty,       // a new staging file or folder (a stale one a killed writer left is removed first)
    CopyTarget,  // the staging file starts as a copy of the target (an append: the target stays untouched)
    Reuse,       // continue in the staging folder an earlier, stopped writer left (a resumed training)
  };
  // Checks rule 2 and takes the lock, then prepares the staging name as `start` says.
  StagedOutput(std::string path, OutputRule rule, Start start = Start::Empty);
  ~StagedOutput();  // without finish(): Discard
  StagedOutput(const StagedOutput&) = delete;
  StagedOutput& operator=(const StagedOutput&) = delete;

  const std::string& path() const { return path_; }        // the target
  const std::string& staging() const { return staging_; }  // where the work writes
  bool replaces() const { return existed_; }               // the target existed when the work began
  // Ends the output as `outcome` says. Returns where the results are ("" when discarded). Throws
  // Error naming both paths when the rename fails (the staging copy is kept).
  std::string finish(Outcome outcome);

 private:
  std::string path_, staging_;
  OutputRule rule_;
  bool existed_ = false, finished_ = false;
  std::unique_ptr<OutputLock> lock_;
};

// Writes `bytes` to `path` under the rule (staged, fsync'd, renamed). Throws Error naming the file.
void write_file_staged(const std::string& path, std::string_view bytes, const OutputRule& rule);

// Copies regular file `from` to `to` under the rule (`from` is an input: never its own target).
void copy_file_staged(const std::string& from, const std::string& to, const OutputRule& rule);

// The staging name of `path`.
inline std::string staging_name(const std::string& path) { return path + ".partial"; }

}  // namespace statescope
