// contained.h — paths statescope resolves on the user's behalf stay inside the folder they were found
// under (docs/reliability.md, "Nothing read from outside").
//
// A Hugging Face cache entry, a snapshot, a corpus folder: each is a root. Every link met under it is
// resolved and refused when it leads outside the root (the cache's snapshot files link to ../../blobs/,
// inside their repository folder, so a real cache passes); a walk never leaves its root, never follows
// a link to a folder, and stops with a named error past a bound on entries. Errors name the path, the
// root and what was expected, never a file's contents; permission errors say so. No LibTorch, no Qt.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace statescope {

// `p` with every link resolved (the parts that exist), or the absolute lexical path where it fails.
std::filesystem::path resolved(const std::filesystem::path& p);
// Whether `inner` lies inside folder `outer` or is it (both already resolved).
bool path_within(const std::filesystem::path& inner, const std::filesystem::path& outer);

// Throws Error unless `path` resolves inside `root`: "<path>: a link to <target>, outside <root> (<what>)".
void require_within(const std::filesystem::path& path, const std::filesystem::path& root, const std::string& what);

// Calls `visit(path, relative name)` for every regular file under folder `root` (followed links to
// files included when they resolve inside `bound`, which is `root` unless given: a cache snapshot's
// bound is its repository folder, where its blobs are), in directory order. Links to folders are not
// followed (they are refused when they lead outside `bound`, skipped otherwise). Throws Error naming
// the entry on a link outside `bound`, on a permission error, and past `max_entries` entries.
using FileVisitor = std::function<void(const std::filesystem::path& path, const std::string& rel)>;
void walk_within(const std::filesystem::path& root, const FileVisitor& visit, int64_t max_entries = 1'000'000,
                 const std::filesystem::path& bound = {});

// A permission error says so; anything else says what the caller expected ("no config.json").
bool permission_denied(const std::error_code& ec);

}  // namespace statescope
