// Half (float16) kernels computed in float and rounded once
// (cwise_half_via_float.h): the unary math functions (Sin ... Log1p, the
// predicates) and the older unary ops (Neg, Abs, Sqrt, Exp, Tanh, ...),
// Atan2, Xdivy, Xlogy, Xlog1py, TruncateDiv, FloorDiv, FloorMod, Pow,
// SquaredDifference, and the gradient ops TanhGrad,
// SigmoidGrad, SqrtGrad, RsqrtGrad and ReciprocalGrad. Where TensorFlow's
// Eigen::half computes an op in several rounded steps (Xlogy's log, the
// gradients' products), the float functors here round at the same steps,
// so the bits agree.
#include "ops/cpu/cwise_half_via_float.h"
#include "ops/cpu/math_cwise_functors.h"
#include "ops/cpu/math_cwise_register.h"

namespace weft {
namespace {

// x * f(y) with f(y) rounded to half first, 0 where x == 0.
#define WEFT_HALF_X_OP_Y(NAME, EXPR)                              \
  struct NAME : BinaryFunctorBase {                               \
    static constexpr int kCost = 25;                              \
    template <typename X, typename Y>                             \
    static auto Apply(const X& x, const Y& y) {                   \
      return (x == 0.f).select(0.f, x * RoundToHalf(EXPR));      \
    }                                                             \
  }
WEFT_HALF_X_OP_Y(HalfXlogy, y.log());
WEFT_HALF_X_OP_Y(HalfXlog1py, y.log1p());
#undef WEFT_HALF_X_OP_Y

struct HalfTruncateDiv : BinaryFunctorBase {  // trunc of the half quotient
  static constexpr int kCost = 10;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    return RoundToHalf(x / y).unaryExpr([](float v) { return std::trunc(v); });
  }
};

// floor of the half quotient (2.9999 as a float quotient is 3 in half).
struct HalfFloorDiv : BinaryFunctorBase {
  static constexpr int kCost = 10;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    return RoundToHalf(x / y).floor();
  }
};

// The square of the half difference.
struct HalfSquaredDifference : BinaryFunctorBase {
  static constexpr int kCost = 3;
  template <typename X, typename Y>
  static auto Apply(const X& x, const Y& y) {
    return RoundToHalf(x - y).square();
  }
};

// The gradient ops, (y, dy) -> z, rounded where Eigen::half rounds.
#define WEFT_HALF_GRAD(NAME, EXPR)                    \
  struct NAME : BinaryFunctorBase {                   \
    static constexpr int kCost = 12;                  \
    template <typename Y, typename D>                 \
    static auto Apply(const Y& y, const D& dy) {      \
      return EXPR;                                    \
    }                                                 \
  }
// dy * (1 - y * y)
WEFT_HALF_GRAD(HalfTanhGrad, dy * RoundToHalf(1.f - RoundToHalf(y * y)));
// dy * (y * (1 - y))
WEFT_HALF_GRAD(HalfSigmoidGrad, dy * RoundToHalf(y * RoundToHalf(1.f - y)));
// 0.5 * dy / y, -0.5 * (dy * y) * (y * y) and -y * y * dy; all 0 where
// dy is 0 (even for a zero, infinite or NaN y), as TensorFlow's.
WEFT_HALF_GRAD(HalfSqrtGrad,
               (dy == 0.f).select(0.f, RoundToHalf(dy * 0.5f) / y));
WEFT_HALF_GRAD(HalfRsqrtGrad,
               (dy == 0.f).select(0.f, RoundToHalf(RoundToHalf(dy * y) * -0.5f) *
                                           RoundToHalf(y * y)));
WEFT_HALF_GRAD(HalfReciprocalGrad,
               (dy == 0.f).select(0.f, RoundToHalf(-y * y) * dy));
#undef WEFT_HALF_GRAD

void RegisterUnaryFunctions(KernelRegistry* r) {
  using namespace functor;  // NOLINT: the functors are the op names
#define WEFT_REGISTER(F) RegisterHalfUnary<F>(r, #F);
  WEFT_MATH_UNARY_FUNCTIONS(WEFT_REGISTER)
#undef WEFT_REGISTER
#define WEFT_REGISTER(F) RegisterCpuKernel<HalfUnaryOp<F, bool>, Half>(r, #F);
  WEFT_MATH_PREDICATES(WEFT_REGISTER)
#undef WEFT_REGISTER
}

// The unary ops of ops/math_ops.cc, on half.
void RegisterBasicUnary(KernelRegistry* r) {
  using namespace functor;  // NOLINT: the functors are the op names
  RegisterHalfUnary<Neg>(r, "Neg");
  RegisterHalfUnary<Abs>(r, "Abs");
  RegisterHalfUnary<Square>(r, "Square");
  RegisterHalfUnary<Sqrt>(r, "Sqrt");
  RegisterHalfUnary<Rsqrt>(r, "Rsqrt");
  RegisterHalfUnary<Exp>(r, "Exp");
  RegisterHalfUnary<Log>(r, "Log");
  RegisterHalfUnary<Tanh>(r, "Tanh");
  RegisterHalfUnary<Sigmoid>(r, "Sigmoid");
  RegisterHalfUnary<Reciprocal>(r, "Reciprocal");
  RegisterHalfUnary<Floor>(r, "Floor");
  RegisterHalfUnary<Ceil>(r, "Ceil");
  RegisterHalfUnary<Round>(r, "Round");
  RegisterHalfUnary<Sign>(r, "Sign");
}

void RegisterBinaryAndGrads(KernelRegistry* r) {
  RegisterHalfBinary<functor::Atan2>(r, "Atan2");
  RegisterHalfBinary<functor::Xdivy>(r, "Xdivy");
  RegisterHalfBinary<HalfXlogy>(r, "Xlogy");
  RegisterHalfBinary<HalfXlog1py>(r, "Xlog1py");
  RegisterHalfBinary<HalfTruncateDiv>(r, "TruncateDiv");
  RegisterHalfBinary<HalfFloorDiv>(r, "FloorDiv");
  RegisterHalfBinary<functor::FloorMod>(r, "FloorMod");  // fmod is exact
  RegisterHalfBinary<functor::Pow>(r, "Pow");
  RegisterHalfBinary<HalfSquaredDifference>(r, "SquaredDifference");
  RegisterHalfSameSize<HalfTanhGrad>(r, "TanhGrad");
  RegisterHalfSameSize<HalfSigmoidGrad>(r, "SigmoidGrad");
  RegisterHalfSameSize<HalfSqrtGrad>(r, "SqrtGrad");
  RegisterHalfSameSize<HalfRsqrtGrad>(r, "RsqrtGrad");
  RegisterHalfSameSize<HalfReciprocalGrad>(r, "ReciprocalGrad");
}

}  // namespace

void RegisterMathHalfKernels(KernelRegistry* r) {
  RegisterUnaryFunctions(r);
  RegisterBasicUnary(r);
  RegisterBinaryAndGrads(r);
}

}  // namespace weft
