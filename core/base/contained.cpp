// contained.cpp — see contained.h.
#include "core/base/contained.h"

#include <cerrno>
#include <system_error>

#include "core/base/error.h"
#include "core/base/names.h"

namespace statescope {
namespace fs = std::filesystem;

fs::path resolved(const fs::path& p) {
  std::error_code ec;
  const fs::path a = fs::absolute(p, ec);
  if (ec) return p.lexically_normal();
  fs::path c = fs::weakly_canonical(a, ec);
  return ec ? a.lexically_normal() : c;
}

bool path_within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
    ++i;
  }
  return true;
}

bool permission_denied(const std::error_code& ec) {
  return ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted;
}

void require_within(const fs::path& path, const fs::path& root, const std::string& what) {
  const fs::path r = resolved(root), t = resolved(path);
  if (path_within(t, r)) return;
  throw Error(escaped(path.string()) + ": a link to " + escaped(t.string()) + ", outside " + escaped(r.string()) + " (" + what +
              "); statescope reads nothing outside the folder it was given");
}

void walk_within(const fs::path& root, const FileVisitor& visit, int64_t max_entries, const fs::path& bound) {
  const fs::path r = resolved(bound.empty() ? root : bound);
  std::error_code ec;
  auto it = fs::recursive_directory_iterator(root, ec);
  if (ec)
    throw Error(escaped(root.string()) + ": cannot list folder: " + (permission_denied(ec) ? "permission denied" : ec.message()));
  int64_t seen = 0;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (++seen > max_entries)
      throw Error(escaped(root.string()) + ": holds more than " + std::to_string(max_entries) +
                  " entries; statescope stops walking it (name a smaller folder or a file)");
    const fs::path& p = it->path();
    const auto st = it->symlink_status(ec);
    if (ec) throw Error(escaped(p.string()) + ": cannot read: " + (permission_denied(ec) ? "permission denied" : ec.message()));
    if (fs::is_symlink(st)) {
      require_within(p, r, "found under " + escaped(root.string()));
      if (fs::is_regular_file(p, ec)) visit(p, p.lexically_relative(root).generic_string());
      continue;  // a link to a folder inside the root: its files are reached through the root itself
    }
    if (fs::is_regular_file(st)) visit(p, p.lexically_relative(root).generic_string());
  }
  if (ec)
    throw Error(escaped(root.string()) + ": cannot list folder: " + (permission_denied(ec) ? "permission denied" : ec.message()));
}

}  // namespace statescope
