#include "runtime/core/file_policy.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace weft {
namespace {

// The components of absolute `path` with "", "." and ".." resolved
// lexically ("/.." is "/").
std::vector<std::string> Components(absl::string_view path) {
  std::vector<std::string> parts;
  for (absl::string_view p : absl::StrSplit(path, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.emplace_back(p);
  }
  return parts;
}

std::string Join(const std::vector<std::string>& parts, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) absl::StrAppend(&out, "/", parts[i]);
  return out.empty() ? "/" : out;
}

bool Inside(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (absl::StartsWith(path, root) &&
                          path.size() > root.size() && path[root.size()] == '/');
}

// What every policy refuses: an empty path, or one with a NUL byte (which
// C file APIs would cut there).
absl::Status CheckPathString(absl::string_view path) {
  if (path.empty()) return absl::InvalidArgumentError("the path is empty");
  if (absl::StrContains(path, absl::string_view("\0", 1))) {
    return absl::InvalidArgumentError(
        "the path holds a NUL byte, so it names no file");
  }
  return absl::OkStatus();
}

// `path` made absolute and split into components, "." and ".." removed.
absl::StatusOr<std::vector<std::string>> AbsoluteComponents(
    absl::string_view path) {
  if (absl::Status s = CheckPathString(path); !s.ok()) return s;
  if (path.front() == '/') return Components(path);
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) {
    return absl::InvalidArgumentError(
        "a relative path, and the working directory cannot be read");
  }
  return Components(absl::StrCat(cwd, "/", path));
}

}  // namespace

absl::StatusOr<std::string> ResolveHostPath(absl::string_view path) {
  absl::StatusOr<std::vector<std::string>> absolute = AbsoluteComponents(path);
  if (!absolute.ok()) return absolute.status();
  const std::vector<std::string>& parts = *absolute;
  // The longest prefix that exists, with its links followed; the rest is
  // appended as written (it holds no "..", so it cannot climb back out).
  for (size_t n = parts.size();; --n) {
    const std::string prefix = Join(parts, n);
    // A prefix another process creates between realpath and lstat (ps
    // tasks making one checkpoint's directory at once) resolves on a
    // second look.
    bool missing = false;
    for (int look = 0; look < 3 && !missing; ++look) {
      char resolved[PATH_MAX];
      if (realpath(prefix.c_str(), resolved) != nullptr) {
        std::string out = resolved;
        for (size_t i = n; i < parts.size(); ++i) {
          if (out != "/") out += "/";
          out += parts[i];
        }
        return out;
      }
      // Only a component that does not exist may be appended unresolved:
      // a dangling link would be followed by whatever opens the path.
      struct stat st;
      if (lstat(prefix.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
          return absl::InvalidArgumentError("the path goes through a dangling link");
        }
        continue;  // it exists now: look again
      }
      if (errno != ENOENT) {
        return absl::InvalidArgumentError("the path cannot be resolved");
      }
      missing = true;
    }
    if (!missing) return absl::InvalidArgumentError("the path cannot be resolved");
    if (n == 0) break;
  }
  return absl::InvalidArgumentError("the path cannot be resolved");
}

std::shared_ptr<const FilePolicy> FilePolicy::Unrestricted() {
  static const std::shared_ptr<const FilePolicy> policy(
      new FilePolicy(true, {}));
  return policy;
}

absl::StatusOr<std::shared_ptr<const FilePolicy>> FilePolicy::Confined(
    const std::vector<std::string>& roots) {
  std::vector<std::string> resolved;
  for (const std::string& root : roots) {
    absl::StatusOr<std::string> r = ResolveHostPath(root);
    struct stat st;
    if (!r.ok() || stat(r->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "file root '", root, "' is not an existing directory"));
    }
    resolved.push_back(*std::move(r));
  }
  return std::shared_ptr<const FilePolicy>(
      new FilePolicy(false, std::move(resolved)));
}

absl::StatusOr<std::string> FilePolicy::Resolve(absl::string_view path) const {
  if (unrestricted_) {
    if (absl::Status s = CheckPathString(path); !s.ok()) return s;
    return std::string(path);
  }
  if (roots_.empty()) {
    return absl::PermissionDeniedError(
        "this server allows graphs no file access (start it with "
        "--file-root DIR to allow paths under DIR)");
  }
  const absl::Status outside = absl::PermissionDeniedError(absl::StrCat(
      "the path is outside this server's file roots (",
      absl::StrJoin(roots_, ", "),
      "); links and '..' are resolved before the check"));
  absl::StatusOr<std::string> resolved = ResolveHostPath(path);
  if (!resolved.ok()) {
    // Why a path cannot be resolved is said only inside the roots, so that
    // the answer for any other path does not depend on what exists there.
    absl::StatusOr<std::vector<std::string>> lexical = AbsoluteComponents(path);
    if (!lexical.ok()) return lexical.status();
    const std::string joined = Join(*lexical, lexical->size());
    for (const std::string& root : roots_) {
      if (Inside(joined, root)) return resolved.status();
    }
    return outside;
  }
  for (const std::string& root : roots_) {
    if (Inside(*resolved, root)) return resolved;
  }
  return outside;
}

std::string FilePolicy::DebugString() const {
  if (unrestricted_) return "unrestricted";
  if (roots_.empty()) return "no file access";
  return absl::StrJoin(roots_, ", ");
}

}  // namespace weft
