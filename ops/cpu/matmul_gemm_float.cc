// Float GEMM: Weft's own kernel where the build targets AVX-512 or AVX2 +
// FMA (as -march=native does on such machines), Eigen's GEMM elsewhere.
#include "ops/cpu/matmul_gemm.h"
#include "ops/cpu/matmul_sgemm.h"

#if !defined(WEFT_SGEMM_AVAILABLE)
#include "ops/cpu/matmul_eigen_gemm.h"
#endif

namespace weft {

absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const float* a,
                  const float* b, float* out) {
#if defined(WEFT_SGEMM_AVAILABLE)
  return Sgemm(c, transpose_a, transpose_b, m, n, k, a, b, out);
#else
  matmul_internal::EigenGemm(c, transpose_a, transpose_b, m, n, k, a, b, out);
  return absl::OkStatus();
#endif
}

}  // namespace weft
