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
// slivers (12 broadcasts and 2 loads feed 24 FMAs per step). The loops go
// in Goto's order: per depth block (and panel of up to 4096 columns) the
// pool threads first pack that B panel together into a buffer they share
// (2 MiB at 2048 wide: it stays in L3, where all of a packed B would not),
// then take row blocks of up to 96 rows in turn, each packing its A block
// (in L2) and multiplying it with the panel. Two panel buffers let the
// threads pack the next panel while others finish this one; there is no
// barrier, only waits on tasks already taken by a running thread, so a
// thread that starts late or shares its core simply takes fewer tasks.
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
