// Float GEMM: Weft's own kernel on CPUs with AVX-512 or AVX2 + FMA (chosen
// at run time, cpu_isa.h), Eigen's GEMM elsewhere.
#include "ops/cpu/matmul_eigen_gemm.h"
#include "ops/cpu/matmul_gemm.h"
#include "ops/cpu/matmul_sgemm.h"

namespace weft {

absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const float* a,
                  const float* b, float* out) {
  if (SgemmAvailable()) {
    return Sgemm(c, transpose_a, transpose_b, m, n, k, a, b, out);
  }
  matmul_internal::EigenGemm(c, transpose_a, transpose_b, m, n, k, a, b, out);
  return absl::OkStatus();
}

}  // namespace weft
