// ReadFile and WriteFile on the CPU: a whole file as one string scalar, in
// and out, through the device's file policy (runtime/core/file_policy.h),
// so a server's graphs reach only its --file-root. ReadFile reads through
// ops/data/record_reader's byte stream, chunk by chunk (nothing is
// allocated ahead of the bytes the file delivers); WriteFile creates the
// missing directories above the file, as TensorFlow's does, and replaces
// the file.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "ops/data/record_reader.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/device.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

absl::Status CheckScalar(const Tensor& t, const char* what) {
  if (t.dims() == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      what, " tensor must be scalar, but had shape: ", t.shape().DebugString()));
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<data::ByteStream> in,
                        data::OpenByteStream(path, data::Compression::kNone, 0));
  std::string contents;
  constexpr uint64_t kChunk = 1 << 20;
  for (uint64_t before = 1; contents.size() != before;) {
    before = contents.size();
    WEFT_RETURN_IF_ERROR(in->Read(kChunk, &contents));
  }
  return contents;
}

absl::Status WriteWholeFile(const std::string& path, const std::string& contents) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return absl::UnknownError(absl::StrCat(dir.string(), "; ", ec.message()));
    }
  }
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  if (f == nullptr) return absl::UnknownError(absl::StrCat(path, "; ", std::strerror(errno)));
  if (std::fwrite(contents.data(), 1, contents.size(), f.get()) != contents.size() ||
      std::fflush(f.get()) != 0) {
    return absl::UnknownError(absl::StrCat(path, "; ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

class ReadFileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& name = c->input(0);
    OP_REQUIRES_OK(c, CheckScalar(name, "Input filename"));
    absl::StatusOr<std::string> path =
        c->device()->file_policy().Resolve(name.scalar<std::string>());
    OP_REQUIRES_OK(c, path.status());
    absl::StatusOr<std::string> contents = ReadWholeFile(*path);
    OP_REQUIRES_OK(c, contents.status());
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    out->scalar<std::string>() = *std::move(contents);
  }
};

class WriteFileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& name = c->input(0);
    const Tensor& contents = c->input(1);
    OP_REQUIRES_OK(c, CheckScalar(name, "Input filename"));
    OP_REQUIRES_OK(c, CheckScalar(contents, "Contents"));
    absl::StatusOr<std::string> path =
        c->device()->file_policy().Resolve(name.scalar<std::string>());
    OP_REQUIRES_OK(c, path.status());
    OP_REQUIRES_OK(c, WriteWholeFile(*path, contents.scalar<std::string>()));
  }
};

}  // namespace

void RegisterFileIoKernels(KernelRegistry* r) {
  r->Register(KernelDef("ReadFile", kDeviceTypeCpu), MakeKernel<ReadFileOp>);
  r->Register(KernelDef("WriteFile", kDeviceTypeCpu), MakeKernel<WriteFileOp>);
}

}  // namespace weft
