// Sigmoid and Tanh of float tensors, the element-wise functions of every
// recurrent cell (LSTM and GRU gates), compiled per ISA (simd_target.h).
//
// AVX-512 and AVX2 + FMA compute them from one vector exp: x = n ln2 + r,
// e^r by its Taylor polynomial to r^6 on |r| <= ln2/2, scaled by 2^n
// through the exponent bits. sigmoid(x) = 1 / (1 + e^-x); tanh(x) is an
// odd polynomial to x^11 below |x| = 0.4 and 1 - 2 / (e^2|x| + 1) with x's
// sign above. Both keep NaNs, keep -0, and reach 0, 1 and +-1 at the
// ends, within 2e-6 relative of the exact values (checked on each ISA,
// tests/ops/activation_simd_test.cc). Other CPUs run Eigen's `logistic`
// and `tanh`, as the generic kernels do (its fast logistic is within 2e-7
// absolute), so results may differ between ISAs in the last bits (the
// optimizer updates, which must not, are in optimizer_update.h).
//
// Why hand-written: the portable build compiles Eigen for SSE2, where the
// two took 16% of a Keras LSTM's kernel time, about 1 ns an element
// (doc/benchmarks.md, "TensorFlow 2.x recurrent graphs").
//
// `y` may be `x`; otherwise the arrays may not overlap. Thread-safe.
#ifndef WEFT_OPS_CPU_ACTIVATION_SIMD_H_
#define WEFT_OPS_CPU_ACTIVATION_SIMD_H_

#include <cstdint>

namespace weft {

void SigmoidFloat(const float* x, float* y, int64_t n);
void TanhFloat(const float* x, float* y, int64_t n);

}  // namespace weft

#endif  // WEFT_OPS_CPU_ACTIVATION_SIMD_H_
