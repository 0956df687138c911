#include "ops/cpu/matmul_eigen_gemm.h"
#include "ops/cpu/matmul_gemm.h"

namespace weft {

absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const Complex64* a,
                  const Complex64* b, Complex64* out) {
  matmul_internal::EigenGemm(c, transpose_a, transpose_b, m, n, k, a, b, out);
  return absl::OkStatus();
}

absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const Complex128* a,
                  const Complex128* b, Complex128* out) {
  matmul_internal::EigenGemm(c, transpose_a, transpose_b, m, n, k, a, b, out);
  return absl::OkStatus();
}

}  // namespace weft
