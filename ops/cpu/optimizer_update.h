// The element-wise updates of the optimizer kernels (training_apply.cc),
// one place for their arithmetic:
//
//   Momentum:  accum = accum * momentum + grad
//              var -= accum * lr                               (plain)
//              var -= grad * lr + accum * momentum * lr        (Nesterov)
//   Adam:      m += (grad - m) * (1 - beta1)
//              v += (grad^2 - v) * (1 - beta2)
//              var -= m * alpha / (sqrt(v) + epsilon)          (plain)
//              var -= (grad * (1 - beta1) + beta1 * m) * alpha
//                     / (sqrt(v) + epsilon)                    (Nesterov)
//   with alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power), as
//   TensorFlow's ApplyAdam computes it.
//
// float runs a loop compiled per ISA (simd_target.h): AVX-512, AVX2 or, on
// other CPUs, Eigen at the baseline's SSE2. double runs Eigen. Every ISA
// does the same IEEE operations in the same order, without fusing, so the
// results are bit-identical on every machine of a cluster (tested:
// tests/ops/optimizer_update_test.cc, on each ISA the machine has).
//
// Why not Eigen alone: the portable build compiles Eigen for SSE2, four
// lanes a sqrt and a division; Adam over the MLP's 270k parameters then
// cost 5-7% of a whole training step against the AVX-512 build
// (doc/benchmarks.md, "Portable binaries against native ones").
//
// The arrays may not overlap, except that grad is only read. Thread-safe;
// no state.
#ifndef WEFT_OPS_CPU_OPTIMIZER_UPDATE_H_
#define WEFT_OPS_CPU_OPTIMIZER_UPDATE_H_

#include <cstdint>

namespace weft {

template <typename T>
struct MomentumStep {
  T lr;
  T momentum;
};

template <typename T>
struct AdamStep {
  // From beta1_power, beta2_power, lr, beta1, beta2 and epsilon.
  AdamStep(T beta1_power, T beta2_power, T lr, T beta1, T beta2, T epsilon);
  T alpha;
  T beta1;
  T one_minus_beta1;
  T one_minus_beta2;
  T epsilon;
};

void MomentumUpdate(int64_t n, float* var, float* accum, const float* grad,
                    const MomentumStep<float>& step, bool nesterov);
void MomentumUpdate(int64_t n, double* var, double* accum, const double* grad,
                    const MomentumStep<double>& step, bool nesterov);

void AdamUpdate(int64_t n, float* var, float* m, float* v, const float* grad,
                const AdamStep<float>& step, bool nesterov);
void AdamUpdate(int64_t n, double* var, double* m, double* v,
                const double* grad, const AdamStep<double>& step,
                bool nesterov);

}  // namespace weft

#endif  // WEFT_OPS_CPU_OPTIMIZER_UPDATE_H_
