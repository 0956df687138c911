// FilePolicy: which host paths a process's graph ops may name.
//
// Every op that touches a file (SaveV2, RestoreV2, MergeV2Checkpoints, and
// any reader or writer that comes later) asks its device's policy for the
// path to use before it opens anything:
//
//   WEFT_ASSIGN_OR_RETURN(std::string path,
//                         c->device()->file_policy().Resolve(prefix));
//
// A local run (`weft run`, LocalSession) is unrestricted: the user owns the
// graph and the host. A server's graphs come from peers, so `weft server`
// confines them to its --file-root directories (none by default: no file
// access at all). Confined, a path is made absolute (relative paths start
// at the working directory), its "." and ".." are removed, and every
// symbolic link among its existing components is followed; the result
// must lie inside a root (each resolved the same way when the policy is
// made). The op then opens that resolved path, not the one it was given.
//
// What a refusal says: PERMISSION_DENIED stating that the path is outside
// the roots; it never depends on whether the file exists, so a peer cannot
// probe the host. A path holding a NUL byte is INVALID_ARGUMENT under every
// policy (C file APIs would silently cut it there).
//
// Not a defence against a local user who can create symbolic links inside
// a root while a step runs (the check and the open are not atomic); roots
// are meant to be directories only the server's user writes.
//
// Thread safety: immutable; share it freely.
#ifndef WEFT_RUNTIME_CORE_FILE_POLICY_H_
#define WEFT_RUNTIME_CORE_FILE_POLICY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace weft {

class FilePolicy {
 public:
  // Any path (NUL bytes still refused).
  static std::shared_ptr<const FilePolicy> Unrestricted();
  // Only paths inside `roots`. Each root must be an existing directory
  // (INVALID_ARGUMENT naming it otherwise); none: no path at all.
  static absl::StatusOr<std::shared_ptr<const FilePolicy>> Confined(
      const std::vector<std::string>& roots);

  // The path to open for `path`: itself when unrestricted, else its
  // resolved form inside a root. INVALID_ARGUMENT for an empty path or one
  // with a NUL byte; PERMISSION_DENIED outside the roots.
  absl::StatusOr<std::string> Resolve(absl::string_view path) const;

  bool unrestricted() const { return unrestricted_; }
  // The resolved roots (empty when unrestricted, or when nothing is
  // allowed).
  const std::vector<std::string>& roots() const { return roots_; }
  // "unrestricted", "no file access", or the roots joined by ", ".
  std::string DebugString() const;

 private:
  FilePolicy(bool unrestricted, std::vector<std::string> roots)
      : unrestricted_(unrestricted), roots_(std::move(roots)) {}

  const bool unrestricted_;
  const std::vector<std::string> roots_;
};

// `path` made absolute against the working directory, with "." and ".."
// removed and the symbolic links of its existing leading components
// followed (the rest appended as written). INVALID_ARGUMENT for an empty
// path, a NUL byte, or a working directory that cannot be read.
absl::StatusOr<std::string> ResolveHostPath(absl::string_view path);

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_FILE_POLICY_H_
