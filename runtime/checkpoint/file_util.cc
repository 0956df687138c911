#include "runtime/checkpoint/file_util.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"

namespace weft {

std::string TempName(const std::string& path) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return absl::StrCat(path, ".tempstate", rng());
}

absl::Status FileError(absl::string_view what, const std::string& path) {
  const int e = errno;
  const std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(e));
  if (e == ENOENT) return absl::NotFoundError(message);
  if (e == ENOSPC || e == EDQUOT) return absl::ResourceExhaustedError(message);
  return absl::FailedPreconditionError(message);
}

absl::Status CreateDirectories(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string part = slash == std::string::npos ? dir : dir.substr(0, slash);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return FileError("cannot create the directory", part);
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

absl::Status CreateParentDirectories(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return absl::OkStatus();
  return CreateDirectories(path.substr(0, slash));
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = TempName(path);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return FileError("cannot create", tmp);
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  absl::Status s;
  if (!wrote || !closed) {
    s = FileError("cannot write", tmp);
  } else if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    s = FileError(absl::StrCat("cannot rename ", tmp, " to"), path);
  }
  if (!s.ok()) std::remove(tmp.c_str());
  return s;
}

}  // namespace weft
