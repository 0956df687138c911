// Weft's own float GEMM for x86 machines with AVX-512, or AVX2 and FMA
// (what MatMul uses for float there; Eigen's GEMM elsewhere and for double).
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
// Kernels: one implementation written over a small ISA traits type
// (simd_isa.h, sgemm_kernel.h), compiled once per ISA and chosen at run
// time (simd_target.h, cpu_isa.h): AVX-512 (12x32 C tiles in 24 zmm registers) or AVX2 +
// FMA (6x16 tiles in 12 ymm registers, Haswell to Zen). Either tile leaves
// just enough registers for the two B vectors and one A broadcast that
// feed 2 x rows FMAs a step. Why a GEMM of our own: Eigen 3.4's reaches
// ~80% of the FMA peak per core and scales poorly over two threads (on the
// Zen 3 machine of doc/benchmarks.md, at 1024 and 2048, 0.7-1.0x TensorFlow's
// speed against 0.9-1.4x for this one). Why two instances: an AVX2 kernel
// on an AVX-512 machine would leave half of each vector unused. Other CPUs
// (no AVX2 + FMA) get Eigen's GEMM through MatMul.
//
// How: the classic packed GEMM (Goto/BLIS). B is packed into slivers as
// wide as a tile and A into slivers as tall as one, in depth blocks of 256,
// so that a C tile lives in registers while a micro-kernel streams the two
// slivers. The loops go in Goto's order: per depth block (and panel of up
// to 4096 columns) the pool threads first pack that B panel together into
// a buffer they share (2 MiB at 2048 wide: it stays in L3, where all of a
// packed B would not), then take row blocks of up to 96 rows in turn, each
// packing its A block (in L2) and multiplying it with the panel. Two panel
// buffers let the threads pack the next panel while others finish this
// one; there is no barrier, only waits on tasks already taken by a running
// thread, so a thread that starts late or shares its core simply takes
// fewer tasks. Products under ~2 MFLOP run on the calling thread.
//
// Thread safety: Sgemm may be called concurrently (each call has its own
// scratch); it uses the context's intra-op pool.
#ifndef WEFT_OPS_CPU_MATMUL_SGEMM_H_
#define WEFT_OPS_CPU_MATMUL_SGEMM_H_

#include <cstdint>

#include "absl/status/status.h"
#include "ops/framework/op_kernel.h"

namespace weft {

// True when this CPU runs a kernel: cpu_isa.h's ActiveCpuIsa() is AVX-512
// or AVX2 + FMA.
bool SgemmAvailable();

// Errors: RESOURCE_EXHAUSTED if packing buffers cannot be allocated;
// UNIMPLEMENTED when !SgemmAvailable().
absl::Status Sgemm(OpKernelContext* c, bool transpose_a, bool transpose_b,
                   int64_t m, int64_t n, int64_t k, const float* a,
                   const float* b, float* out);

}  // namespace weft

#endif  // WEFT_OPS_CPU_MATMUL_SGEMM_H_
