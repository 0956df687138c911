#include "runtime/gpu/cublas_api.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cuda_paths.h"

namespace weft {
namespace {

// dlopen's reason for the last failure, or a fallback if it gave none.
std::string DlError() {
  const char* e = dlerror();
  return e != nullptr ? e : "no reason given";
}

// Resolves every entry point from `lib`, or names the first one missing.
absl::StatusOr<CublasApi> Resolve(void* lib, const std::string& from) {
  CublasApi api;
  struct Entry {
    const char* name;
    void** slot;
  };
  const Entry entries[] = {
      {"cublasCreate_v2", reinterpret_cast<void**>(&api.create)},
      {"cublasSetStream_v2", reinterpret_cast<void**>(&api.set_stream)},
      {"cublasSgemm_v2", reinterpret_cast<void**>(&api.sgemm)},
      {"cublasGetStatusName", reinterpret_cast<void**>(&api.get_status_name)},
  };
  for (const Entry& e : entries) {
    *e.slot = dlsym(lib, e.name);
    if (*e.slot == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cuBLAS from ", from, " has no ", e.name, " (", DlError(),
          "): it is older than the CUDA ", CUBLAS_VER_MAJOR,
          " headers Weft was built with; install the toolkit's cuBLAS ",
          "or rebuild Weft against the toolkit you have"));
    }
  }
  return api;
}

}  // namespace

std::vector<std::string> CublasCandidates() {
  const std::string soname = absl::StrCat("libcublas.so.", CUBLAS_VER_MAJOR);
  return {soname, absl::StrCat(WEFT_CUDA_LIB_DIR, "/", soname)};
}

absl::StatusOr<CublasApi> LoadCublasFrom(const std::vector<std::string>& candidates) {
  std::vector<std::string> tried;
  for (const std::string& path : candidates) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      tried.push_back(DlError());
      continue;
    }
    absl::StatusOr<CublasApi> api = Resolve(lib, path);
    if (!api.ok()) dlclose(lib);
    return api;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot load cuBLAS, so the GPUs are unusable; tried ",
      absl::StrJoin(candidates, ", "), ": ", absl::StrJoin(tried, "; "),
      ". Install the CUDA toolkit's cuBLAS (libcublas and libcublasLt ", CUBLAS_VER_MAJOR,
      ") or add the folder that has them to LD_LIBRARY_PATH"));
}

absl::StatusOr<const CublasApi*> LoadCublas() {
  static const auto* const loaded = [] {
    absl::StatusOr<CublasApi> api = LoadCublasFrom(CublasCandidates());
    return api.ok() ? new absl::StatusOr<const CublasApi*>(new CublasApi(*api))
                    : new absl::StatusOr<const CublasApi*>(api.status());
  }();
  return *loaded;
}

}  // namespace weft
