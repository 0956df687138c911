// Element-wise kernels for complex64 and complex128: arithmetic, powers,
// exponentials, logarithms, trigonometric and hyperbolic functions and
// their inverses, Sign, Sigmoid, Equal/NotEqual, Xdivy/Xlogy/Xlog1py and
// the gradient ops, each where TensorFlow registers it for complex types.
//
// Where TensorFlow's complex result differs from the real formula, it is
// TensorFlow's that is computed (checked by tests/conformance/complex_test):
// SquaredDifference is (x-y)*conj(x-y); SqrtGrad, RsqrtGrad and
// ReciprocalGrad use conj(y); TanhGrad and SigmoidGrad do not (TensorFlow's
// gradient functions conjugate before calling them); Sign is x/|x|, 0 at 0.
#include <complex>

#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/cwise_register.h"
#include "ops/cpu/math_cwise_functors.h"

namespace weft {
namespace {

// Add, Sub, Mul, Div, Neg, Square, Exp, Log, Reciprocal and Pow are the
// real types' functors (cwise_functors.h: for complex, the plain operators
// and functions, vectorised by Eigen); DivNoNan is registered with its
// float forms (math_extra_kernels.cc). What complex computes differently,
// or where the real functor does not apply (IeeeSqrt), is here.
#define WEFT_COMPLEX_BINARY(NAME, COST, EXPR)   \
  struct NAME : BinaryFunctorBase {             \
    static constexpr int kCost = COST;          \
    template <typename X, typename Y>           \
    static auto Apply(const X& x, const Y& y) { \
      using T = typename X::Scalar;             \
      (void)sizeof(T);                          \
      return EXPR;                              \
    }                                           \
  }
WEFT_COMPLEX_BINARY(SquaredDifference, 4,
                    (x - y).unaryExpr([](const T& d) { return T(std::norm(d)); }));
// Gradients, (y, dy) for the op's output y.
WEFT_COMPLEX_BINARY(TanhGrad, 6, y * (T(1) - x * x));
WEFT_COMPLEX_BINARY(SigmoidGrad, 6, y * (x * (T(1) - x)));
WEFT_COMPLEX_BINARY(SqrtGrad, 12,
                    (y == T(0)).select(T(0), (y * T(0.5)) / x.conjugate()));
WEFT_COMPLEX_BINARY(RsqrtGrad, 10,
                    (y == T(0)).select(T(0), x.conjugate() * x.conjugate() *
                                                 x.conjugate() * y * T(-0.5)));
WEFT_COMPLEX_BINARY(ReciprocalGrad, 8,
                    (y == T(0)).select(T(0), -y * (x * x).conjugate()));
#undef WEFT_COMPLEX_BINARY

WEFT_UNARY_FUNCTOR(Sqrt, 20, x.sqrt());
WEFT_UNARY_FUNCTOR(Rsqrt, 30, x.sqrt().inverse());
WEFT_UNARY_FUNCTOR(Tanh, 60, x.unaryExpr([](const T& v) { return std::tanh(v); }));
WEFT_UNARY_FUNCTOR(Sigmoid, 60, (T(1) + (-x).exp()).inverse());
WEFT_UNARY_FUNCTOR(Sign, 10, x.unaryExpr([](const T& v) {
  return v == T(0) ? T(0) : v / std::abs(v);
}));

template <typename T>
void RegisterFor(KernelRegistry* r) {
  RegisterBinary<functor::Add, T>(r, "Add");
  RegisterBinary<functor::Add, T>(r, "AddV2");
  RegisterBinary<functor::Sub, T>(r, "Sub");
  RegisterBinary<functor::Mul, T>(r, "Mul");
  RegisterBinary<functor::Div, T>(r, "Div");
  RegisterBinary<functor::Div, T>(r, "RealDiv");
  RegisterBinary<functor::Pow, T>(r, "Pow");
  RegisterBinary<SquaredDifference, T>(r, "SquaredDifference");
  RegisterBinary<functor::Xdivy, T>(r, "Xdivy");
  RegisterBinary<functor::Xlogy, T>(r, "Xlogy");
  RegisterBinary<functor::Xlog1py, T>(r, "Xlog1py");
  RegisterCpuKernel<EqualityOp<functor::Equal, T>, T>(r, "Equal");
  RegisterCpuKernel<EqualityOp<functor::NotEqual, T>, T>(r, "NotEqual");
  RegisterCpuKernel<SameSizeBinaryOp<TanhGrad, T>, T>(r, "TanhGrad");
  RegisterCpuKernel<SameSizeBinaryOp<SigmoidGrad, T>, T>(r, "SigmoidGrad");
  RegisterCpuKernel<SameSizeBinaryOp<SqrtGrad, T>, T>(r, "SqrtGrad");
  RegisterCpuKernel<SameSizeBinaryOp<RsqrtGrad, T>, T>(r, "RsqrtGrad");
  RegisterCpuKernel<SameSizeBinaryOp<ReciprocalGrad, T>, T>(r,
                                                              "ReciprocalGrad");

  RegisterUnary<functor::Neg, T>(r, "Neg");
  RegisterUnary<functor::Square, T>(r, "Square");
  RegisterUnary<Sqrt, T>(r, "Sqrt");
  RegisterUnary<Rsqrt, T>(r, "Rsqrt");
  RegisterUnary<functor::Reciprocal, T>(r, "Reciprocal");
  RegisterUnary<functor::Exp, T>(r, "Exp");
  RegisterUnary<functor::Log, T>(r, "Log");
  RegisterUnary<Tanh, T>(r, "Tanh");
  RegisterUnary<Sigmoid, T>(r, "Sigmoid");
  RegisterUnary<Sign, T>(r, "Sign");
  using namespace functor;  // NOLINT: the functors are the op names
#define WEFT_REGISTER(F) RegisterUnary<F, T>(r, #F);
  WEFT_MATH_UNARY_FUNCTIONS(WEFT_REGISTER)
#undef WEFT_REGISTER
}

}  // namespace

void RegisterCwiseComplexKernels(KernelRegistry* r) {
  RegisterFor<Complex64>(r);
  RegisterFor<Complex128>(r);
}

}  // namespace weft
