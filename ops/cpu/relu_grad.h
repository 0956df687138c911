// ReluGrad's float loop, vectorized per ISA (simd_target.h):
//   out[i] = f[i] > 0 ? g[i] : 0 over [0, n), NaN features giving 0.
// `out` may be g or f. Why not Eigen: Eigen 3.4 evaluates select() one
// scalar at a time, with a branch per element that random signs mispredict
// half the time; a compare and select (a masked move on AVX-512, a blend on
// AVX2) does a vector at once. Thread-safe; no state.
#ifndef WEFT_OPS_CPU_RELU_GRAD_H_
#define WEFT_OPS_CPU_RELU_GRAD_H_

#include <cstdint>

namespace weft {

void ReluGradFloat(const float* g, const float* f, float* out, int64_t n);

}  // namespace weft

#endif  // WEFT_OPS_CPU_RELU_GRAD_H_
