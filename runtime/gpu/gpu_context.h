// GpuContext: the process-wide state of one GPU — its CUDA stream, its
// memory (GpuAllocator) and its cuBLAS handle.
//
//   absl::StatusOr<GpuContext*> gpu = GpuContext::Get(0);
//   WEFT_RETURN_IF_ERROR((*gpu)->Activate());        // on this thread
//   MyKernel<<<grid, block, 0, (*gpu)->stream()>>>(...);
//
// One stream per GPU: every kernel, cuBLAS call and copy on the GPU is
// queued on it, so they run in the order the executor issues them and a
// kernel may read what an earlier one wrote without further
// synchronisation. Copies to and from the host (Copy) wait for the stream,
// so a host buffer is complete (or free to reuse) when Copy returns.
// This gives up overlap of copies with compute for simplicity; separate
// copy streams with events are the next step if transfers dominate.
//
// Thread safety: Get and every method are thread-safe. cudart's current
// device is per host thread, so code calling CUDA directly calls Activate()
// first on its thread. Contexts are never destroyed.
#ifndef WEFT_RUNTIME_GPU_GPU_CONTEXT_H_
#define WEFT_RUNTIME_GPU_GPU_CONTEXT_H_

#include <cstddef>
#include <memory>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "absl/status/statusor.h"
#include "runtime/gpu/cublas_api.h"
#include "runtime/gpu/gpu_allocator.h"

namespace weft {

class GpuContext {
 public:
  // The number of GPUs the CUDA runtime sees, or why it sees none
  // (FAILED_PRECONDITION for a missing driver or device). Probed once.
  static absl::StatusOr<int> DeviceCount();
  // The context of GPU `ordinal`, made on first use (stream, cuBLAS handle).
  static absl::StatusOr<GpuContext*> Get(int ordinal);

  int ordinal() const { return ordinal_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  // The cuBLAS entry points (loaded with the first context).
  const CublasApi& blas() const { return *blas_; }
  GpuAllocator* allocator() { return &allocator_; }
  const cudaDeviceProp& properties() const { return properties_; }

  // Makes this GPU current on the calling thread.
  absl::Status Activate() const;
  // A copy on the stream, complete when it returns.
  absl::Status Copy(void* dst, const void* src, size_t num_bytes,
                    cudaMemcpyKind kind) const;
  // Waits for everything queued on the stream; reports a kernel's
  // asynchronous failure.
  absl::Status Synchronize() const;

 private:
  explicit GpuContext(int ordinal);
  absl::Status Init();

  const int ordinal_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  const CublasApi* blas_ = nullptr;
  cudaDeviceProp properties_{};
  GpuAllocator allocator_;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_GPU_GPU_CONTEXT_H_
