// CUDA and cuBLAS error codes as absl::Status, naming what was being done.
//
//   WEFT_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "selecting GPU:0"));
//
// A failure of the driver or device (no device, launch failure, illegal
// address) is INTERNAL, out of memory RESOURCE_EXHAUSTED, a missing or too
// old driver FAILED_PRECONDITION (the machine must change first). CUDA
// builds only.
#ifndef WEFT_RUNTIME_GPU_CUDA_STATUS_H_
#define WEFT_RUNTIME_GPU_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace weft {

absl::Status CudaStatus(cudaError_t error, absl::string_view what);
absl::Status CublasStatus(cublasStatus_t status, absl::string_view what);

}  // namespace weft

#endif  // WEFT_RUNTIME_GPU_CUDA_STATUS_H_
