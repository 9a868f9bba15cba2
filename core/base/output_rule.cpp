// output_rule.cpp — see output_rule.h.
#include "core/base/output_rule.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/base/error.h"
#include "core/base/file_io.h"

namespace statescope {
namespace fs = std::filesystem;

namespace {

constexpr const char* kStagingMark = ".statescope-staging";  // in a staging folder: ours to remove

bool exists_no_follow(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

bool folder_is_empty(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && fs::is_empty(p, ec);
}

fs::path canonical_or_absolute(const std::string& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(fs::absolute(p), ec);
  return ec ? fs::absolute(p).lexically_normal() : c;
}

// Whether `inner` lies inside folder `outer` (or is it).
bool within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

void fsync_folder_of(const std::string& path) {
  const std::string dir = fs::path(canonical_or_absolute(path)).parent_path().string();
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

void check_output(const std::string& path, const OutputRule& rule) {
  check_output_writable(path);
  const std::string kind = rule.folder ? "folder" : "file";
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists) {
    if (rule.folder ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
      throw Error(path + ": is " + file_kind(path) + ", not a " + kind +
                  " statescope may replace; choose another output (it was left as it is)");
    if (!rule.overwrite && !(rule.folder && folder_is_empty(path)))
      throw Error(path + ": already exists; choose another output or pass --overwrite to replace it (it was left as it is)");
  } else if (exists_no_follow(path)) {
    throw Error(path + ": is a link to nothing; choose another output (it was left as it is)");
  }
  const fs::path out = canonical_or_absolute(path);
  std::error_code ec;
  for (const auto& in : rule.inputs) {
    if (in.empty() || !fs::exists(in, ec)) continue;
    const fs::path inp = canonical_or_absolute(in);
    const bool same = exists && fs::equivalent(path, in, ec);
    const bool in_dir = fs::is_directory(in, ec);
    // An existing output directly inside an input folder (a model's own file), an output folder that
    // holds an input (--out M for --model M/sub), or an output folder inside an input folder.
    const bool inside = in_dir && ((exists && out.parent_path() == inp) || (rule.folder && within(out, inp)));
    const bool holds = rule.folder && within(inp, out);
    if (same || inside || holds)
      throw Error(path + ": " + (same ? "is" : holds ? "holds" : "is inside") + " one of the run's inputs (" + in +
                  "); choose another output (nothing was written)");
  }
}

StagedOutput::StagedOutput(std::string path, OutputRule rule, Start start)
    : path_(std::move(path)), staging_(staging_name(path_)), rule_(std::move(rule)) {
  if (path_.empty()) throw Error("no output named");
  lock_ = std::make_unique<OutputLock>(path_);  // before looking: no second writer decides meanwhile
  const bool append = start == Start::CopyTarget && fs::exists(path_);
  if (!append) check_output(path_, rule_);
  else require_regular_file(path_, "the file to append to");
  existed_ = fs::exists(path_) && !(rule_.folder && folder_is_empty(path_));
  std::error_code ec;
  if (start == Start::Reuse) {
    if (!rule_.folder || !fs::exists(fs::path(staging_) / kStagingMark, ec))
      throw Error(staging_ + ": is not a staging folder statescope left; nothing to continue");
    return;
  }
  // A staging name left by a killed writer: ours to redo (we hold the lock), if it is what we make.
  if (exists_no_follow(staging_)) {
    struct stat st {};
    (void)::lstat(staging_.c_str(), &st);
    const bool ours = rule_.folder ? S_ISDIR(st.st_mode) && fs::exists(fs::path(staging_) / kStagingMark, ec)
                                   : S_ISREG(st.st_mode);
    if (!ours)
      throw Error(staging_ + ": is in the way of the output " + path_ + " (" + file_kind(staging_) +
                  (rule_.folder ? " without statescope's staging mark" : "") + "); move it away (it was left as it is)");
    fs::remove_all(staging_, ec);
    if (ec) throw Error(staging_ + ": cannot remove a stale staging copy: " + ec.message());
  }
  if (rule_.folder) {
    if (!fs::create_directory(staging_, ec) || ec)
      throw Error(staging_ + ": cannot create (" + (ec ? ec.message() : std::string("exists")) + ")");
    FileWriter mark((fs::path(staging_) / kStagingMark).string());
    mark.write("statescope writes " + path_ + " here and renames it when complete\n");
    mark.close();
  } else if (append) {
    // The target is only read until finish(): every failure leaves it as it was.
    if (!fs::copy_file(path_, staging_, fs::copy_options::overwrite_existing, ec) || ec) {
      const int err = ec.value();
      fs::remove(staging_, ec);
      throw Error(write_error(staging_, err, "a copy of " + path_));
    }
  }
}

StagedOutput::~StagedOutput() {
  if (finished_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

std::string StagedOutput::finish(Outcome outcome) {
  if (finished_) return path_;
  finished_ = true;
  std::error_code ec;
  if (outcome == Outcome::Discard) {
    fs::remove_all(staging_, ec);
    return "";
  }
  if (outcome == Outcome::KeepStaging) return staging_;
  if (outcome == Outcome::KeepNew && existed_) {
    std::fprintf(stderr, "statescope: %s left as it was; the unfinished results are in %s\n", path_.c_str(),
                 staging_.c_str());
    return staging_;
  }
  // Rule 2 again at the last moment: something may have appeared at the target meanwhile.
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && (rule_.folder ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
    throw Error(path_ + ": became " + file_kind(path_) + " while the work ran; it was left as it is and the results are in " +
                staging_);
  if (rule_.folder) fs::remove(fs::path(staging_) / kStagingMark, ec);
  if (rule_.folder && existed_) {
    // Swap the two folders in one step (readers see the old model or the new one), then drop the old.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) != 0)
      throw Error(path_ + ": cannot replace with " + staging_ + " (" + std::strerror(errno) +
                  "); the new results are in " + staging_);
    fs::remove_all(staging_, ec);
  } else if (::rename(staging_.c_str(), path_.c_str()) != 0) {
    throw Error(path_ + ": cannot rename " + staging_ + " onto it (" + std::strerror(errno) +
                "); the new results are in " + staging_);
  }
  fsync_folder_of(path_);
  return path_;
}

void write_file_staged(const std::string& path, std::string_view bytes, const OutputRule& rule) {
  StagedOutput out(path, rule);
  FileWriter w(out.staging());
  w.write(bytes);
  w.close();
  out.finish(StagedOutput::Outcome::Replace);
}

}  // namespace statescope

namespace statescope {

void copy_file_staged(const std::string& from, const std::string& to, const OutputRule& rule) {
  require_regular_file(from);
  OutputRule r = rule;
  r.inputs.push_back(from);
  StagedOutput out(to, r);
  std::error_code ec;
  if (!fs::copy_file(from, out.staging(), fs::copy_options::overwrite_existing, ec) || ec)
    throw Error(write_error(out.staging(), ec.value(), "a copy of " + from));
  out.finish(StagedOutput::Outcome::Replace);
}

}  // namespace statescope
