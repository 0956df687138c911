// MatMul on the GPU with cuBLAS sgemm.
//
// cuBLAS is column-major; a row-major [r, c] matrix is the column-major
// [c, r] matrix of its transpose. So C = op(A) op(B) in row-major is
// C^T = op(B)^T op(A)^T in column-major: call sgemm with B first, n and m
// swapped, each leading dimension the row-major column count, and the
// transpose flags unchanged.
#include <climits>

#include "ops/cuda/gpu_kernel_util.h"
#include "ops/cuda/gpu_kernels.h"

namespace weft {
namespace {

class MatMulGpuOp : public OpKernel {
 public:
  explicit MatMulGpuOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("transpose_a", &transpose_a_));
    c->SetStatus(c->GetAttr("transpose_b", &transpose_b_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& a = c->input(0);
    const Tensor& b = c->input(1);
    OP_REQUIRES(c, a.dims() == 2 && b.dims() == 2,
                absl::InvalidArgumentError(absl::StrCat(
                    "MatMul node '", name(), "' needs matrices, got ",
                    a.shape().DebugString(), " and ", b.shape().DebugString())));
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0);
    const int64_t k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t n = b.dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(c, k == b.dim_size(transpose_b_ ? 1 : 0),
                absl::InvalidArgumentError(absl::StrCat(
                    "Matrix size-incompatible: In[0]: ", a.shape().DebugString(),
                    ", In[1]: ", b.shape().DebugString(), " (transpose_a=",
                    transpose_a_, ", transpose_b=", transpose_b_, ")")));
    OP_REQUIRES(c, m <= INT_MAX && n <= INT_MAX && k <= INT_MAX,
                absl::InvalidArgumentError(absl::StrCat(
                    "MatMul node '", name(), "': a dimension above 2^31-1 ",
                    "does not fit cuBLAS's int sizes; place it on the CPU")));
    absl::StatusOr<GpuOutput> out = PrepareGpuOutput(c, TensorShape({m, n}));
    OP_REQUIRES_OK(c, out.status());
    if (m == 0 || n == 0) return;
    GpuContext& gpu = *out->gpu;
    float* o = out->tensor->data<float>();
    if (k == 0) {  // an empty sum: zeros
      OP_REQUIRES_OK(c, LaunchStatus(*this, cudaMemsetAsync(o, 0, out->tensor->TotalBytes(),
                                                            gpu.stream())));
      return;
    }
    const float alpha = 1.f, beta = 0.f;
    OP_REQUIRES_OK(
        c, CublasStatus(
               gpu.blas().sgemm(gpu.cublas(), transpose_b_ ? CUBLAS_OP_T : CUBLAS_OP_N,
                                transpose_a_ ? CUBLAS_OP_T : CUBLAS_OP_N,
                                static_cast<int>(n), static_cast<int>(m),
                                static_cast<int>(k), &alpha, b.data<float>(),
                                static_cast<int>(b.dim_size(1)), a.data<float>(),
                                static_cast<int>(a.dim_size(1)), &beta, o,
                                static_cast<int>(n)),
               absl::StrCat("cublasSgemm for MatMul node '", name(), "'")));
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

}  // namespace

void RegisterMatMulGpuKernel(KernelRegistry* r) {
  r->Register(KernelDef("MatMul", kDeviceTypeGpu).TypeConstraint("T", DT_FLOAT),
              MakeKernel<MatMulGpuOp>);
}

}  // namespace weft
