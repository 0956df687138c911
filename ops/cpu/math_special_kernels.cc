// The special functions, through Eigen's SpecialFunctions module as in
// TensorFlow: Erf, Erfc, Lgamma, Digamma (float, double, half), Erfinv and
// Ndtri (float, double; Erfinv(x) = Ndtri((x + 1) / 2) / sqrt(2), TensorFlow's
// formula), Igamma, Igammac, IgammaGradA, Polygamma, Zeta and
// RandomGammaGrad (float, double, broadcasting), and Betainc (float,
// double; a, b and x of one shape, or scalars).
// The module is heavy, so only this file and math_bessel_kernels.cc include
// it.
#include <cmath>
#include <limits>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <unsupported/Eigen/SpecialFunctions>
#pragma GCC diagnostic pop

#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_half_via_float.h"
#include "ops/cpu/math_cwise_register.h"

namespace weft {
namespace {

// Where TensorFlow's Eigen differs from this Eigen 3.4 at the edges of the
// domain, TensorFlow's values: Digamma is NaN at its poles (0, -0, the
// negative integers and -inf) rather than +-inf; Ndtri (and so Erfinv) is
// NaN outside [0, 1], for NaN and for inf; Polygamma(n > 0, inf) is
// n! * zeta(n + 1, inf) with that zeta 0 (so NaN once n! overflows);
// Zeta(x, q) for x > 1 and q > 0 is 0 where this Eigen's series turns NaN
// on a term or sum that underflows (q or x infinite, float results below
// its range).
template <typename X>
auto TfDigamma(const X& x) {
  using T = typename X::Scalar;
  const auto pole = (x <= T(0)) && (x == x.floor());
  return pole.select(std::numeric_limits<T>::quiet_NaN(), x.digamma());
}
template <typename X>
auto TfNdtri(const X& p) {
  using T = typename X::Scalar;
  return (p >= T(0) && p <= T(1))
      .select(p.ndtri(), std::numeric_limits<T>::quiet_NaN());
}

template <typename T>
T TfZeta(T x, T q) {
  const T z = Eigen::numext::zeta(x, q);
  return (std::isnan(z) && x > T(1) && q > T(0)) ? T(0) : z;
}

WEFT_UNARY_FUNCTOR(Erf, 20, x.erf());
WEFT_UNARY_FUNCTOR(Erfc, 30, x.erfc());
WEFT_UNARY_FUNCTOR(Lgamma, 60, x.lgamma());
WEFT_UNARY_FUNCTOR(Digamma, 60, TfDigamma(x));
WEFT_UNARY_FUNCTOR(Ndtri, 40, TfNdtri(x));
WEFT_UNARY_FUNCTOR(Erfinv, 45, TfNdtri(x * T(0.5) + T(0.5)) * T(M_SQRT1_2));

struct Polygamma : BinaryFunctorBase {
  static constexpr int kCost = 200;
  template <typename N, typename X>
  static auto Apply(const N& n, const X& x) {
    using T = typename X::Scalar;
    const auto at_inf = (x == std::numeric_limits<T>::infinity()) &&
                        (n > T(0)) && (n == n.floor());
    return (n == T(0)).select(
        TfDigamma(x),
        at_inf.select((n + T(1)).lgamma().exp() * T(0), Eigen::polygamma(n, x)));
  }
};

#define WEFT_SPECIAL_BINARY(NAME, COST, FN)             \
  struct NAME : BinaryFunctorBase {                     \
    static constexpr int kCost = COST;                  \
    template <typename A, typename X>                   \
    static auto Apply(const A& a, const X& x) {         \
      return Eigen::FN(a, x);                           \
    }                                                   \
  }
WEFT_SPECIAL_BINARY(Igamma, 200, igamma);
WEFT_SPECIAL_BINARY(Igammac, 200, igammac);
// IgammaGradA(a, x): d Igamma(a, x) / d a.
WEFT_SPECIAL_BINARY(IgammaGradA, 300, igamma_der_a);
// RandomGammaGrad(alpha, sample): d sample / d alpha of a Gamma(alpha) sample.
WEFT_SPECIAL_BINARY(RandomGammaGrad, 300, gamma_sample_der_alpha);
#undef WEFT_SPECIAL_BINARY

// Zeta(x, q): the Hurwitz zeta function, sum over k >= 0 of (k + q)^-x.
struct Zeta : BinaryFunctorBase {
  static constexpr int kCost = 200;
  template <typename X, typename Q>
  static auto Apply(const X& x, const Q& q) {
    using T = typename X::Scalar;
    return x.binaryExpr(q, [](T s, T a) { return TfZeta(s, a); });
  }
};

// Betainc(a, b, x): the regularized incomplete beta function. As in
// TensorFlow, the inputs share one shape, except that any may be a scalar.
template <typename T>
class BetaincOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* c) override {
    const char* names[] = {"a", "b", "x"};
    TensorShape shape;
    for (int i = 0; i < 3; ++i) {
      for (int j = i + 1; j < 3; ++j) {
        const TensorShape& si = c->input(i).shape();
        const TensorShape& sj = c->input(j).shape();
        OP_REQUIRES(c, si.dims() == 0 || sj.dims() == 0 || si == sj,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Shapes of ", names[i], " and ", names[j], " are inconsistent: ",
                        si.DebugString(), " vs. ", sj.DebugString())));
      }
      if (c->input(i).dims() > 0) shape = c->input(i).shape();
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, shape, &out));
    const int64_t n = shape.num_elements();
    auto arg = [&](int i) -> EigenArray<T> {
      const Tensor& t = c->input(i);
      if (t.dims() == 0) return EigenArray<T>::Constant(n, t.data<T>()[0]);
      return ConstArrayMap<T>(t.data<T>(), n);
    };
    const EigenArray<T> a = arg(0), b = arg(1), x = arg(2);
    T* o = out->data<T>();
    ParallelRange(c, n, 500, [&](int64_t begin, int64_t end) {
      ArrayMap<T>(o + begin, end - begin) = Eigen::betainc(
          a.segment(begin, end - begin), b.segment(begin, end - begin),
          x.segment(begin, end - begin));
    });
  }
};

template <typename T>
void RegisterFor(KernelRegistry* r) {
  r->Register(KernelDef("Betainc", kDeviceTypeCpu).TypeConstraint("T", DataTypeToEnum<T>::value),
              MakeKernel<BetaincOp<T>>);
  RegisterUnary<Erf, T>(r, "Erf");
  RegisterUnary<Erfc, T>(r, "Erfc");
  RegisterUnary<Lgamma, T>(r, "Lgamma");
  RegisterUnary<Digamma, T>(r, "Digamma");
  RegisterUnary<Ndtri, T>(r, "Ndtri");
  RegisterUnary<Erfinv, T>(r, "Erfinv");
  RegisterBinary<Igamma, T>(r, "Igamma");
  RegisterBinary<Igammac, T>(r, "Igammac");
  RegisterBinary<IgammaGradA, T>(r, "IgammaGradA");
  RegisterBinary<Zeta, T>(r, "Zeta");
  RegisterBinary<Polygamma, T>(r, "Polygamma");
  RegisterBinary<RandomGammaGrad, T>(r, "RandomGammaGrad");
}

}  // namespace

void RegisterMathSpecialKernels(KernelRegistry* r) {
  RegisterFor<float>(r);
  RegisterFor<double>(r);
  RegisterHalfUnary<Erf>(r, "Erf");
  RegisterHalfUnary<Erfc>(r, "Erfc");
  RegisterHalfUnary<Lgamma>(r, "Lgamma");
  RegisterHalfUnary<Digamma>(r, "Digamma");
}

}  // namespace weft
