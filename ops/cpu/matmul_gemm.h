// The GEMM behind MatMul, one overload per dtype, each in its own file
// (matmul_gemm_<dtype>.cc) so the heavy Eigen code compiles in parallel.
//
//   OP_REQUIRES_OK(c, Gemm(c, /*transpose_a=*/false, /*transpose_b=*/true,
//                          m, n, k, a, b, out));
//
// out[m, n] = op(a) * op(b), all row-major; op(a) is [m, k], op(b) is
// [k, n]; a is stored [k, m] when transposed, b [n, k]. m, n, k > 0. Large
// products use the device's intra-op pool. Float uses Weft's SGEMM where
// the build has a kernel for the CPU (AVX-512 or AVX2 + FMA) (matmul_sgemm.h), Eigen's GEMM otherwise; double
// uses Eigen's; integers a plain loop nest.
#ifndef WEFT_OPS_CPU_MATMUL_GEMM_H_
#define WEFT_OPS_CPU_MATMUL_GEMM_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ops/framework/op_kernel.h"

namespace weft {

absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const float* a,
                  const float* b, float* out);
absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const double* a,
                  const double* b, double* out);
// complex64 and complex128 (matmul_gemm_complex.cc): Eigen's GEMM; a
// transposed operand is transposed, not conjugated (MatMul's meaning;
// BatchMatMul's adjoints conjugate before calling).
absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const Complex64* a,
                  const Complex64* b, Complex64* out);
absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const Complex128* a,
                  const Complex128* b, Complex128* out);
absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const int32_t* a,
                  const int32_t* b, int32_t* out);
absl::Status Gemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                  int64_t m, int64_t n, int64_t k, const int64_t* a,
                  const int64_t* b, int64_t* out);

}  // namespace weft

#endif  // WEFT_OPS_CPU_MATMUL_GEMM_H_
