// The Bessel functions of ops/math_cwise_ops.cc through Eigen's
// SpecialFunctions module, as in TensorFlow: BesselI0/I0e/I1/I1e (modified,
// first kind, and exponentially scaled), BesselK0/K0e/K1/K1e (modified,
// second kind), BesselJ0/J1 and BesselY0/Y1 (first and second kind), on
// float, double and half (half computed in float and rounded once, which is
// what Eigen::half's Bessel functions do). TensorFlow registers no bfloat16
// CPU kernels for them.
//
// Like math_special_kernels.cc this file includes the heavy SpecialFunctions
// module itself; RegisterMathBesselKernels is called from
// math_cwise_kernels.cc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <unsupported/Eigen/SpecialFunctions>
#pragma GCC diagnostic pop

#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_half_via_float.h"

namespace weft {
namespace {

WEFT_UNARY_FUNCTOR(BesselI0, 60, Eigen::bessel_i0(x));
WEFT_UNARY_FUNCTOR(BesselI0e, 60, Eigen::bessel_i0e(x));
WEFT_UNARY_FUNCTOR(BesselI1, 60, Eigen::bessel_i1(x));
WEFT_UNARY_FUNCTOR(BesselI1e, 60, Eigen::bessel_i1e(x));
WEFT_UNARY_FUNCTOR(BesselK0, 60, Eigen::bessel_k0(x));
WEFT_UNARY_FUNCTOR(BesselK0e, 60, Eigen::bessel_k0e(x));
WEFT_UNARY_FUNCTOR(BesselK1, 60, Eigen::bessel_k1(x));
WEFT_UNARY_FUNCTOR(BesselK1e, 60, Eigen::bessel_k1e(x));
WEFT_UNARY_FUNCTOR(BesselJ0, 80, Eigen::bessel_j0(x));
WEFT_UNARY_FUNCTOR(BesselJ1, 80, Eigen::bessel_j1(x));
WEFT_UNARY_FUNCTOR(BesselY0, 80, Eigen::bessel_y0(x));
WEFT_UNARY_FUNCTOR(BesselY1, 80, Eigen::bessel_y1(x));

// Each functor on float, double and half.
template <typename F>
void RegisterBessel(KernelRegistry* r, const char* op) {
  RegisterUnary<F, float>(r, op);
  RegisterUnary<F, double>(r, op);
  RegisterHalfUnary<F>(r, op);
}

}  // namespace

void RegisterMathBesselKernels(KernelRegistry* r) {
  RegisterBessel<BesselI0>(r, "BesselI0");
  RegisterBessel<BesselI0e>(r, "BesselI0e");
  RegisterBessel<BesselI1>(r, "BesselI1");
  RegisterBessel<BesselI1e>(r, "BesselI1e");
  RegisterBessel<BesselK0>(r, "BesselK0");
  RegisterBessel<BesselK0e>(r, "BesselK0e");
  RegisterBessel<BesselK1>(r, "BesselK1");
  RegisterBessel<BesselK1e>(r, "BesselK1e");
  RegisterBessel<BesselJ0>(r, "BesselJ0");
  RegisterBessel<BesselJ1>(r, "BesselJ1");
  RegisterBessel<BesselY0>(r, "BesselY0");
  RegisterBessel<BesselY1>(r, "BesselY1");
}

}  // namespace weft
