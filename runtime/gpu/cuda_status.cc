#include "runtime/gpu/cuda_status.h"

#include "absl/strings/str_cat.h"
#include "runtime/gpu/cublas_api.h"

namespace weft {

absl::Status CudaStatus(cudaError_t error, absl::string_view what) {
  if (error == cudaSuccess) return absl::OkStatus();
  const std::string message =
      absl::StrCat(what, ": CUDA error ", static_cast<int>(error), " (",
                   cudaGetErrorName(error), ": ", cudaGetErrorString(error), ")");
  switch (error) {
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
      return absl::FailedPreconditionError(
          absl::StrCat(message, "; check the NVIDIA driver with nvidia-smi"));
    default:
      return absl::InternalError(message);
  }
}

absl::Status CublasStatus(cublasStatus_t status, absl::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  // A cuBLAS status comes from a loaded cuBLAS, so the name is at hand.
  absl::StatusOr<const CublasApi*> blas = LoadCublas();
  const std::string message = absl::StrCat(
      what, ": cuBLAS error ", static_cast<int>(status), " (",
      blas.ok() ? (*blas)->get_status_name(status) : "name unknown", ")");
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {
    return absl::ResourceExhaustedError(message);
  }
  return absl::InternalError(message);
}

}  // namespace weft
