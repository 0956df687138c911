// Weft's own float GEMM for AVX-512 machines (what MatMul uses for float
// there; Eigen's GEMM elsewhere and for double).
//
//   if (SgemmAvailable()) {
//     WEFT_RETURN_IF_ERROR(Sgemm(c, /*transpose_a=*/false, /*transpose_b=*/false,
//                                m, n, k, a, b, out));
//   }
//
// out[m, n] = op(a) * op(b), all row-major; op(a) is [m, k] (a stored
// [k, m] when transposed), op(b) is [k, n] (b stored [n, k] when
// transposed). m, n, k > 0.
//
// How: the classic packed GEMM (Goto/BLIS). B is packed into 32-column
// slivers and A into 12-row slivers, in depth blocks of 256, so that a 12x32
// tile of C lives in 24 zmm registers while a micro-kernel streams the two
// slivers (12 broadcasts and 2 loads feed 24 FMAs per step). The output is
// split into one block of rows (or columns) per pool thread; each thread
// packs what it needs itself, one depth block at a time, so the whole
// product is one parallel region and the packed data stays in cache.
// Products under ~2 MFLOP run on the calling thread. Eigen 3.4's GEMM
// reaches ~80% of this machine's FMA peak per core and scales poorly over
// two threads; this one gets closer to peak and to 2x.
#ifndef WEFT_OPS_CPU_MATMUL_SGEMM_H_
#define WEFT_OPS_CPU_MATMUL_SGEMM_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ops/framework/op_kernel.h"

namespace weft {

// True when this build has the AVX-512 kernel (compiled with -mavx512f, as
// -march=native gives on AVX-512 machines).
bool SgemmAvailable();

// Errors: RESOURCE_EXHAUSTED if packing buffers cannot be allocated;
// UNIMPLEMENTED when !SgemmAvailable().
absl::Status Sgemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                   int64_t m, int64_t n, int64_t k, const float* a,
                   const float* b, float* out);

}  // namespace weft

#endif  // WEFT_OPS_CPU_MATMUL_SGEMM_H_
