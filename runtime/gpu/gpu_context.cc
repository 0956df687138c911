#include "runtime/gpu/gpu_context.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "runtime/gpu/cuda_status.h"
#include "runtime/core/status.h"

namespace weft {

absl::StatusOr<int> GpuContext::DeviceCount() {
  static const absl::StatusOr<int>* const count = [] {
    int n = 0;
    absl::Status s = CudaStatus(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
    return s.ok() ? new absl::StatusOr<int>(n) : new absl::StatusOr<int>(s);
  }();
  return *count;
}

absl::StatusOr<GpuContext*> GpuContext::Get(int ordinal) {
  WEFT_ASSIGN_OR_RETURN(const int count, DeviceCount());
  if (ordinal < 0 || ordinal >= count) {
    return absl::NotFoundError(absl::StrCat("no GPU:", ordinal, "; this machine has ",
                                            count, " GPU", count == 1 ? "" : "s"));
  }
  // Each context, or why it could not be made, is kept for the life of the
  // process.
  struct Slot {
    bool tried = false;
    absl::StatusOr<GpuContext*> context = nullptr;
  };
  static absl::Mutex mu;
  static auto* const slots = new std::vector<Slot>(count);
  absl::MutexLock lock(&mu);
  Slot& slot = (*slots)[ordinal];
  if (!slot.tried) {
    slot.tried = true;
    auto* context = new GpuContext(ordinal);
    absl::Status s = context->Init();
    if (s.ok()) {
      RegisterDeviceMemory(context->allocator());
      slot.context = context;
    } else {
      slot.context = s;  // the half-made context is leaked: it is tiny
    }
  }
  return slot.context;
}

GpuContext::GpuContext(int ordinal) : ordinal_(ordinal), allocator_(this) {}

absl::Status GpuContext::Init() {
  const std::string gpu = absl::StrCat("GPU:", ordinal_);
  WEFT_RETURN_IF_ERROR(Activate());
  WEFT_RETURN_IF_ERROR(CudaStatus(cudaGetDeviceProperties(&properties_, ordinal_),
                                  absl::StrCat("reading the properties of ", gpu)));
  WEFT_RETURN_IF_ERROR(
      CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                 absl::StrCat("creating the stream of ", gpu)));
  WEFT_ASSIGN_OR_RETURN(blas_, LoadCublas());
  WEFT_RETURN_IF_ERROR(
      CublasStatus(blas_->create(&cublas_), absl::StrCat("cublasCreate on ", gpu)));
  return CublasStatus(blas_->set_stream(cublas_, stream_),
                      absl::StrCat("binding cuBLAS to the stream of ", gpu));
}

absl::Status GpuContext::Activate() const {
  return CudaStatus(cudaSetDevice(ordinal_), absl::StrCat("selecting GPU:", ordinal_));
}

absl::Status GpuContext::Copy(void* dst, const void* src, size_t num_bytes,
                              cudaMemcpyKind kind) const {
  WEFT_RETURN_IF_ERROR(Activate());
  WEFT_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(dst, src, num_bytes, kind, stream_),
                                  absl::StrCat("cudaMemcpyAsync on GPU:", ordinal_)));
  return Synchronize();
}

absl::Status GpuContext::Synchronize() const {
  return CudaStatus(cudaStreamSynchronize(stream_),
                    absl::StrCat("waiting for the stream of GPU:", ordinal_));
}

}  // namespace weft
